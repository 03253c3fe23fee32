// Bundles the extension suite (test/vscode/suite) into one CommonJS file the
// extension host loads as `extensionTestsPath`, and writes the workspace it
// opens, for code-server and for @vscode/test-electron alike.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");

/**
 * The folder the suite's editor opens: two files, and the agents the cases
 * talk to. `embeddedDemo`: no agents configured, so the sidecar runs the demo
 * agent of its own bundle (the installed copy's smoke).
 */
export function writeTestWorkspace(workspace: string, options: { embeddedDemo?: boolean } = {}): void {
  mkdirSync(join(workspace, ".vscode"), { recursive: true });
  writeFileSync(join(workspace, "main.ts"), 'console.log("hello");\n');
  writeFileSync(join(workspace, "README.md"), "# Workspace\n\nA folder the agents work in.\n");
  writeFileSync(
    join(workspace, ".vscode/settings.json"),
    JSON.stringify(
      {
        "acpRemote.server.port": 0,
        "acpRemote.agents": options.embeddedDemo
          ? []
          : [
              { name: "fixture", command: NODE, args: [join(repo, "test/fixtures/agent.ts")] },
              // The embedded demo agent: its turn has a plan, thoughts, a diff and a file read (screenshots).
              { name: "demo", command: NODE, args: [join(repo, "sidecar/cli/main.ts"), "demo-agent"], env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } },
            ],
        "acpRemote.trace.server": "messages",
        // The cases stop and restart the server with remote clients attached: only first-run.ts wants the question.
        "acpRemote.server.confirmStop": false,
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "chat.disableAIFeatures": true,
      },
      null,
      2,
    ),
  );
}

/** The in-editor suite of the source folder's extension; the installed copy's smoke is suite/installed.ts. */
export const SUITE_ENTRY = "test/vscode/suite/index.ts";

/** Writes `<runDir>/suite/index.js`, bundled from `entry` (a file that exports `run()`). */
export async function buildSuite(runDir: string, entry = SUITE_ENTRY): Promise<void> {
  await build({
    entryPoints: [join(repo, entry)],
    outfile: join(runDir, "suite/index.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    external: ["vscode", "bufferutil", "utf-8-validate"],
    logLevel: "warning",
  });
}
