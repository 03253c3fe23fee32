// The version acp-remote reports is package.json's: a bundle carries the one
// it was built with (scripts/build.mjs's define), the sources read their
// checkout's, and `serve` says it when it starts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { build } from "esbuild";
import { ManagedProcess, removeOnExit } from "../helpers/managed-process.ts";
import { packageVersion, versionDefine } from "../../scripts/version-define.mjs";

const REPO = resolve(import.meta.dirname, "../..");
const NODE = join(REPO, "node_modules/.bin/node");
/** A version no checkout has: what is printed can only come from where the test put it. */
const OTHER_VERSION = "9.8.7-test.1";

const work = mkdtempSync(join(tmpdir(), "acp-remote-version-"));
const forget = removeOnExit(work);
let server: ManagedProcess | undefined;
after(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
  forget();
});

describe("the version", () => {
  it("regression: --version was a constant written by hand in protocol/version.ts; a bundle prints the version of the package.json it was built with", async () => {
    const out = join(work, "bundle.mjs");
    await build({
      stdin: { contents: 'import { VERSION } from "./protocol/version.ts";\nprocess.stdout.write(VERSION);\n', resolveDir: REPO, loader: "ts" },
      outfile: out,
      bundle: true,
      platform: "node",
      format: "esm",
      logLevel: "warning",
      define: versionDefine(OTHER_VERSION),
    });
    assert.equal(execFileSync(NODE, [out], { encoding: "utf8" }), OTHER_VERSION);
  });

  it("regression: the sources reported the hand-written constant; run as they are, they report their checkout's package.json", () => {
    const checkout = join(work, "checkout");
    mkdirSync(join(checkout, "protocol"), { recursive: true });
    copyFileSync(join(REPO, "protocol/version.ts"), join(checkout, "protocol/version.ts"));
    writeFileSync(join(checkout, "package.json"), JSON.stringify({ name: "acp-remote", version: OTHER_VERSION, type: "module" }));
    const printed = execFileSync(NODE, ["--input-type=module", "-e", `import { VERSION } from ${JSON.stringify(join(checkout, "protocol/version.ts"))}; process.stdout.write(VERSION);`], { encoding: "utf8" });
    assert.equal(printed, OTHER_VERSION);
  });

  it("the built `acp-remote --version` is package.json's version", () => {
    if (!existsSync(join(REPO, "dist/acp-remote.mjs"))) execFileSync(NODE, ["scripts/build.mjs"], { cwd: REPO, stdio: "inherit" });
    assert.equal(execFileSync(NODE, [join(REPO, "dist/cli.mjs"), "--version"], { encoding: "utf8" }), `${packageVersion()}\n`);
  });

  it("`serve` says its version and its Node when it starts", async () => {
    server = new ManagedProcess({
      name: "acp-remote serve",
      command: NODE,
      args: [join(REPO, "dist/cli.mjs"), "serve", "--port", "0", "--data-dir", join(work, "data"), "--token", "version-test-token"],
      env: { ...process.env, ACP_REMOTE_TOKEN: undefined, ACP_REMOTE_DATA_DIR: undefined },
    });
    await server.start(/acp-remote listening on \S+\n/);
    await server.waitForOutput(new RegExp(`acp-remote ${packageVersion().replaceAll(".", "\\.")} on Node ${process.versions.node.replaceAll(".", "\\.")}\\n`));
  });
});
