// The version of acp-remote is package.json's, and only there. A bundle carries
// it as a constant: scripts/build.mjs defines ACP_REMOTE_VERSION when it builds
// (an installed package may have no package.json beside the code it runs). The
// sources, run as they are (the tests, `node sidecar/cli/main.ts`), read it
// from the package.json of their checkout.
import { readFileSync } from "node:fs";

/** Replaced by its value in a bundle (esbuild's `define`); undeclared when the sources run. */
declare const ACP_REMOTE_VERSION: string | undefined;

function checkoutVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
  if (typeof pkg.version !== "string") throw new Error("package.json has no version");
  return pkg.version;
}

/** The version of acp-remote, reported by `--version`, by `serve` at start, in `initialize` and to the editor. */
export const VERSION: string = typeof ACP_REMOTE_VERSION === "string" ? ACP_REMOTE_VERSION : checkoutVersion();
