// Bundles the extension suite (test/vscode/suite) into one CommonJS file the
// extension host loads as `extensionTestsPath`, for code-server and for
// @vscode/test-electron alike.
import { join, resolve } from "node:path";
import { build } from "esbuild";

const repo = resolve(import.meta.dirname, "../..");

/** Writes `<runDir>/suite/index.js`. */
export async function buildSuite(runDir: string): Promise<void> {
  await build({
    entryPoints: [join(repo, "test/vscode/suite/index.ts")],
    outfile: join(runDir, "suite/index.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    external: ["vscode", "bufferutil", "utf-8-validate"],
    logLevel: "warning",
  });
}
