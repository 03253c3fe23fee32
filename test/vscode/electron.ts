// The same extension suite in desktop VS Code, for machines that can download
// it: @vscode/test-electron fetches VS Code, opens a test workspace with the
// extension under development and runs suite/index.ts in its extension host.
// Without a browser driving the window, the suite answers permissions through
// the command its notification links use and skips what only a browser sees
// (test/vscode/run.ts, with code-server and Playwright, covers those).
//
//   node test/vscode/electron.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { buildSuite, writeTestWorkspace } from "./build-suite.ts";
import { runTests } from "@vscode/test-electron";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");

async function main(): Promise<number> {
  if (spawnSync(NODE, ["scripts/build.mjs"], { cwd: repo, stdio: "inherit" }).status !== 0) throw new Error("the build failed");
  const runDir = mkdtempSync(join(tmpdir(), "acp-electron-"));
  try {
    const workspace = join(runDir, "workspace");
    // The same workspace as the code-server run: the cases talk to its agents (fixture, demo).
    writeTestWorkspace(workspace);
    await buildSuite(runDir);
    // Resolves with 0; a failed suite rejects (TestRunFailedError), reported below.
    return await runTests({
      extensionDevelopmentPath: repo,
      extensionTestsPath: join(runDir, "suite/index.js"),
      launchArgs: [workspace, "--disable-extensions", "--disable-workspace-trust", "--user-data-dir", join(runDir, "ud")],
      extensionTestsEnv: { ACP_REMOTE_DATA_DIR: join(runDir, "acp-data") },
    });
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`electron: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
