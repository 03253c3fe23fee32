// The same extension suite in desktop VS Code, for machines that can download
// it: @vscode/test-electron fetches VS Code, opens a test workspace with the
// extension under development and runs suite/index.ts in its extension host.
// Without a browser driving the window, the suite answers permissions through
// the command its notification links use and skips what only a browser sees
// (test/vscode/run.ts, with code-server and Playwright, covers those).
//
//   node test/vscode/electron.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { buildSuite } from "./build-suite.ts";
import { runTests } from "@vscode/test-electron";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");

async function main(): Promise<number> {
  if (spawnSync(NODE, ["scripts/build.mjs"], { cwd: repo, stdio: "inherit" }).status !== 0) throw new Error("the build failed");
  const runDir = mkdtempSync(join(tmpdir(), "acp-electron-"));
  try {
    const workspace = join(runDir, "workspace");
    mkdirSync(join(workspace, ".vscode"), { recursive: true });
    writeFileSync(join(workspace, "main.ts"), 'console.log("hello");\n');
    writeFileSync(
      join(workspace, ".vscode/settings.json"),
      JSON.stringify({ "acpRemote.server.port": 0, "acpRemote.agents": [{ name: "fixture", command: NODE, args: [join(repo, "test/fixtures/agent.ts")] }] }, null, 2),
    );
    await buildSuite(runDir);
    await runTests({
      extensionDevelopmentPath: repo,
      extensionTestsPath: join(runDir, "suite/index.js"),
      launchArgs: [workspace, "--disable-extensions", "--disable-workspace-trust", "--user-data-dir", join(runDir, "ud")],
      extensionTestsEnv: { ACP_REMOTE_DATA_DIR: join(runDir, "acp-data") },
    });
    return 0;
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
