// The smoke of the extension as a user installs it: the .vsix that
// `npm run package` builds, installed with `code-server --install-extension`
// (test/vscode/run.ts --installed), not the source folder. The extension
// starts its sidecar from the installed copy, with the embedded demo agent
// of the installed bundle; New Session and a prompt typed in its tab finish a
// turn; and the page of a pairing link loads the web client the package
// carries, signs in and lists the sessions.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import * as vscode from "vscode";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import { EXTENSION_ID, extensionApi, runCases, ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";

/** The session tab of a session (its webview's #root). */
const tabOf = (sessionId: string): string => `#root[data-session-id="${sessionId}"]`;

let api: AcpRemoteApi;
let extensionPath = "";

/** The command line of a process, as /proc has it. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "");
}

const cases: TestCase[] = [
  {
    name: "installed | the extension is the installed .vsix, not the source folder",
    setup: true,
    fn: async () => {
      const extension = vscode.extensions.getExtension<AcpRemoteApi>(EXTENSION_ID);
      assert.ok(extension, `${EXTENSION_ID} is installed`);
      extensionPath = extension.extensionPath;
      // run.ts installs into the run folder's extensions folder, beside the workspace.
      const installedUnder = join(workspaceDir(), "..", "exts");
      assert.ok(!relative(installedUnder, extensionPath).startsWith(".."), `${extensionPath} is under ${installedUnder}`);
      assert.equal(extension.extensionKind, vscode.ExtensionKind.Workspace);
      api = await extensionApi();
    },
  },
  {
    name: "installed | Start Server runs the sidecar of the installed copy",
    setup: true,
    fn: async () => {
      await vscode.commands.executeCommand("acpRemote.start");
      await waitFor("the server to run", () => api.state === "running" && api.status !== undefined && api.sidecarPid !== undefined);
      const args = commandLine(api.sidecarPid!);
      assert.ok(args.includes(join(extensionPath, "dist", "cli.mjs")), `the sidecar runs the installed dist/cli.mjs: ${args.join(" ")}`);
      await waitFor("the embedded demo agent in the status", () => api.status?.agents.some((a) => a.name === "demo"));
    },
  },
  {
    name: "installed | New Session and a prompt typed in its tab: the demo agent's turn ends",
    needs: "browser",
    fn: async () => {
      // One agent: New Session asks nothing.
      const sessionId = await vscode.commands.executeCommand<string | undefined>("acpRemote.newSession");
      assert.ok(typeof sessionId === "string" && sessionId !== "", "New Session resolves with the session's id");
      await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
      const connected = await ui<{ value: string | null }>("webviewAttribute", { selector: `${tabOf(sessionId)} .sv-root`, name: "data-connection", equals: "connected" });
      assert.equal(connected.value, "connected", "the tab opened its session");
      await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: "textarea.sv-input", text: "Show me what you can do", press: "Enter" });
      // The demo asks before its edit; the answer comes from the editor's command.
      const pending = await waitFor("the demo's permission request", () => api.permissions().find((e) => e.state === "pending" && e.info.sessionId === sessionId));
      await vscode.commands.executeCommand("acpRemote.answerPermission", pending.info.permissionId, "allow_once");
      const end = await ui<{ value: string | null }>("webviewAttribute", { selector: `${tabOf(sessionId)} .sv-turn-end`, name: "data-stop-reason", equals: "end_turn" });
      assert.equal(end.value, "end_turn");
      const log = await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} [role=log]`, contains: "You approved the edit" });
      assert.match(log.text, /Show me what you can do/);
    },
  },
  {
    name: "installed | regression: the installed extension's server answered a pairing link with 503 \"The web client is not built\"; the link's page loads the web client, signs in and lists the sessions",
    needs: "browser",
    fn: async () => {
      const connecting = vscode.commands.executeCommand("acpRemote.connectDevice");
      await ui("inputBox", { text: "Installed smoke" });
      await connecting;
      const { text } = await ui<{ text: string }>("webviewText", { selector: "#pairing-link", contains: "#token=" });
      const link = text.trim();
      const page = await ui<{ count: number; text: string }>("openPage", { url: link, selector: '.wc-sessions[aria-busy="false"] > li' });
      assert.ok(page.count >= 1, `the page lists the session started in the editor:\n${page.text}`);
    },
  },
];

export async function run(): Promise<void> {
  const failed = await runCases(cases);
  await vscode.commands.executeCommand("acpRemote.stop");
  if (failed > 0) throw new Error(`${failed} installed-extension test(s) failed`);
}
