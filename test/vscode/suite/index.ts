// The extension in a real VS Code: these cases run inside its extension host
// (code-server here, @vscode/test-electron elsewhere). They drive the
// extension through its commands and API, a remote client through the real
// sidecar it started, and the browser (through run.ts) for what a person
// does: clicking in webviews, looking at the views.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import * as vscode from "vscode";
import { methods, type ClientContext } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import { addAgentCases } from "./add-agent.ts";
import { deferredCases } from "./deferred.ts";
import { diffCases } from "./diff.ts";
import { firstRunCases } from "./first-run.ts";
import { crashCases } from "./crash.ts";
import { pairingCases } from "./pairing.ts";
import { afterReloadCases, reloadPending, sessionTabCases, type ReloadMark } from "./session-tab.ts";
import { tabsAfterReloadCases, tabsCases, tabsReloadMark, tabsReloadPending, type TabsReloadMark } from "./tabs.ts";
import { agentText, connectRemote, type RemoteClient } from "./remote-client.ts";
import { extensionApi, hasBrowser, inNotificationCentre, markReload, notificationShows, runCases, takeReloadMark, ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";

let api: AcpRemoteApi;
const remotes: RemoteClient[] = [];

async function startServer(): Promise<void> {
  await vscode.commands.executeCommand("acpRemote.start");
  await waitFor("the server to run", () => api.state === "running" && api.status !== undefined);
}

async function openSession(remote: RemoteClient): Promise<{ ctx: ClientContext; sessionId: string }> {
  return remote.run(async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
    return { ctx, sessionId };
  });
}

async function remote(agent?: string, token?: string): Promise<RemoteClient> {
  const r = connectRemote(api.server!.url, token ?? (await api.token()), agent);
  remotes.push(r);
  return r;
}

/** The sidecar processes this extension host started (`dist/cli.mjs serve`), by pid. */
function sidecarProcesses(): number[] {
  // ps exits 1 when no process matches: its output is what counts.
  const ps = spawnSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return ps.stdout
    .split("\n")
    .filter((line) => /dist\/cli\.mjs serve/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

function entry(title: string) {
  return api.permissions().find((e) => e.info.toolCall.title === title);
}

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration("acpRemote").update(key, value, vscode.ConfigurationTarget.Workspace);
}

let editorSessionId = "";

/** What the workspace's main.ts holds on disk between the cases. */
const MAIN_TS = 'console.log("hello");\n';

/**
 * Edits the document itself and waits until it holds `expected`. An edit
 * through its TextEditor is refused (resolves false) once another tab is in
 * front of that editor, which under load can happen at any time.
 */
async function editDocument(doc: vscode.TextDocument, build: (edit: vscode.WorkspaceEdit) => void, expected: string): Promise<void> {
  const edit = new vscode.WorkspaceEdit();
  build(edit);
  assert.ok(await vscode.workspace.applyEdit(edit), `the edit of ${doc.uri.fsPath} was applied`);
  await waitFor(`${doc.uri.fsPath} to hold ${JSON.stringify(expected)}`, () => doc.getText() === expected);
}

/** Runs one prompt on a fresh remote session; resolves with the agent's text. */
async function promptText(text: string): Promise<string> {
  const r = await remote();
  const { ctx, sessionId } = await openSession(r);
  const result = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  assert.equal(result.stopReason, "end_turn");
  return agentText(r.updates, sessionId);
}

const cases: TestCase[] = [
  {
    name: "activation: the extension activates, starts the sidecar and shows it in the tree",
    setup: true,
    fn: async () => {
      api = await extensionApi();
      await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar");
      await startServer();
      assert.match(api.server!.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      await waitFor("the fixture agent in the status", () => api.status?.agents.some((a) => a.name === "fixture"));
      await vscode.commands.executeCommand("acpRemote.focusView");
      if (hasBrowser()) {
        // Nothing attached yet: the Overview's welcome says it runs (first-run.ts reads it in each state).
        const tree = await ui<{ text: string }>("treeText", { contains: "The server is running" });
        assert.match(tree.text, /New Session/);
      }
    },
  },
  // The first run: welcome content, walkthrough, status item, title actions, Stop's question (before any session exists).
  ...firstRunCases({ api: () => api }),
  // Session tabs that keep the person's work, and one name for a session (first: the tree is short yet).
  ...tabsCases({ api: () => api, remote }),
  {
    name: "permission | editor answers: clicking the option in the webview finishes the remote turn with that choice",
    fn: async () => {
      const r = await remote();
      const { ctx, sessionId } = await openSession(r);
      editorSessionId = sessionId;
      const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "plan read the file | edit it\nthink the edit is small\npermission Edit main.ts" }] });
      const pending = await waitFor("the editor's permission entry", () => entry("Edit main.ts"));
      // At the same time the remote client is asked too (policy "both").
      await waitFor("the remote client's permission request", () => r.asks.find((a) => a.params.toolCall.title === "Edit main.ts"));
      // The notification (with the options as links) shows at the same time as the panel.
      if (hasBrowser()) await notificationShows("asks to run");
      await ui("clickPermission", { permissionId: pending.info.permissionId, optionId: "allow_once" });
      const result = await turn;
      assert.equal(result.stopReason, "end_turn");
      assert.match(agentText(r.updates, sessionId), /outcome: selected allow_once/);
      assert.equal(entry("Edit main.ts")?.state, "answered");
      assert.equal(entry("Edit main.ts")?.chosenOptionId, "allow_once");
    },
  },
  {
    name: "permission | remote answers: the editor's prompt is withdrawn",
    fn: async () => {
      const r = await remote();
      const { ctx, sessionId } = await openSession(r);
      const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Run tests" }] });
      const pending = await waitFor("the editor's permission entry", () => entry("Run tests"));
      const ask = await waitFor("the remote client's permission request", () => r.asks.find((a) => a.params.toolCall.title === "Run tests"));
      if (hasBrowser()) await notificationShows('"Run tests"');
      ask.answer({ outcome: { outcome: "selected", optionId: "reject_once" } });
      const result = await turn;
      assert.equal(result.stopReason, "end_turn");
      assert.match(agentText(r.updates, sessionId), /outcome: selected reject_once/);
      await waitFor("the editor's entry to be withdrawn", () => entry("Run tests")?.state === "withdrawn");
      if (hasBrowser()) {
        // The notification is gone (a progress notification closes when its request settles)...
        await inNotificationCentre(() => ui("notificationText", { absent: '"Run tests"' }));
        // ...and the panel marks the entry withdrawn, without its buttons.
        const state = await ui<{ state: string; buttons: number }>("permissionState", { permissionId: pending.info.permissionId });
        assert.equal(state.state, "withdrawn");
        assert.equal(state.buttons, 0, "a withdrawn request has no option buttons left");
      }
    },
  },
  {
    name: "permission | editor answers from the notification: its option link answers the request",
    needs: "browser",
    fn: async () => {
      const r = await remote();
      const { ctx, sessionId } = await openSession(r);
      const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Format the file" }] });
      await waitFor("the editor's permission entry", () => entry("Format the file"));
      await inNotificationCentre(() => ui("clickNotificationLink", { notification: "Format the file", label: "Reject" }));
      assert.equal((await turn).stopReason, "end_turn");
      assert.match(agentText(r.updates, sessionId), /outcome: selected reject_once/);
      assert.equal(entry("Format the file")?.state, "answered");
    },
  },
  {
    name: "views | the sessions panel shows the transcript of a session live",
    fn: async () => {
      await vscode.commands.executeCommand("acpRemote.openSession", editorSessionId);
      if (!hasBrowser()) return;
      const text = await ui<{ text: string }>("webviewText", { selector: "[role=log]", contains: "outcome: selected allow_once" });
      assert.match(text.text, /the edit is small/);
    },
  },
  {
    name: "views | the session tab's Stop button cancels the running turn",
    needs: "browser",
    fn: async () => {
      const r = await remote();
      const { ctx, sessionId } = await openSession(r);
      const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 120000" }] });
      await waitFor("the turn to run", () => api.status?.sessions.some((s) => s.sessionId === sessionId && s.running));
      await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
      // Playwright clicks once the button is enabled (the panel learnt the turn runs).
      await ui("clickWebview", { frameSelector: `#root[data-session-id="${sessionId}"]`, selector: ".sv-stop" });
      assert.equal((await turn).stopReason, "cancelled");
    },
  },
  {
    name: "views | the demo agent's proposed edit: its diff in the permission panel, the whole turn in the session panel (screenshots)",
    fn: async () => {
      const r = await remote("demo");
      const { ctx, sessionId } = await openSession(r);
      const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Show me what you can do" }] });
      const pending = await waitFor("the demo's permission request", () =>
        api.permissions().find((e) => e.state === "pending" && e.info.sessionId === sessionId),
      );
      const card = `section[data-permission-id="${pending.info.permissionId}"]`;
      if (hasBrowser()) {
        await ui("webviewText", { selector: card, contains: "Hello from acp-remote" });
        await ui("screenshot", { name: "permission-panel", frameSelector: card });
      }
      await ui("clickPermission", { permissionId: pending.info.permissionId, optionId: "allow_once" });
      assert.equal((await turn).stopReason, "end_turn");
      assert.match(agentText(r.updates, sessionId), /You approved the edit \(allow once\)/);
      await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
      if (!hasBrowser()) return;
      await ui("webviewText", { selector: `#root[data-session-id="${sessionId}"] [role=log]`, contains: "That is the whole tour" });
      await ui("screenshot", { name: "sessions-panel", frameSelector: `#root[data-session-id="${sessionId}"]` });
      await vscode.commands.executeCommand("acpRemote.focusView");
      await ui("screenshot", { name: "tree", element: ".part.sidebar" });
    },
  },
  // Sessions driven from the editor's session tab.
  ...sessionTabCases({ api: () => api, remote }),
  // Reviewing a proposed edit in the diff editor (extension/diff).
  ...diffCases({ api: () => api, remote }),
  {
    name: "host | fs/read_text_file of an open document returns its unsaved edits",
    fn: async () => {
      const path = join(workspaceDir(), "main.ts");
      const doc = await vscode.workspace.openTextDocument(path);
      await vscode.window.showTextDocument(doc);
      await editDocument(doc, (edit) => edit.insert(doc.uri, new vscode.Position(0, 0), "// unsaved line\n"), `// unsaved line\n${MAIN_TS}`);
      assert.ok(doc.isDirty);
      const text = await promptText(`read ${path}`);
      assert.match(text, /read: \/\/ unsaved line\nconsole\.log\("hello"\);/);
      // Put the file back as it was for the next case.
      await editDocument(doc, (edit) => edit.delete(doc.uri, new vscode.Range(0, 0, 1, 0)), MAIN_TS);
      assert.ok(await doc.save(), "the document was saved");
      assert.equal(readFileSync(path, "utf8"), MAIN_TS);
    },
  },
  {
    name: "host | fs/write_text_file is a workspace edit: saved to disk, and undo brings the old text back",
    fn: async () => {
      const path = join(workspaceDir(), "main.ts");
      const text = await promptText(`write ${path} export const written = true;`);
      assert.match(text, /wrote: /);
      const doc = await vscode.workspace.openTextDocument(path);
      assert.equal(doc.getText(), "export const written = true;", "the document holds the agent's text");
      assert.equal(readFileSync(path, "utf8"), "export const written = true;", `on disk (document dirty: ${doc.isDirty})`);
      // Undo acts on the editor that has the focus: the document's, once it is the active one.
      await vscode.window.showTextDocument(doc);
      await waitFor("the document's editor in front", () => vscode.window.activeTextEditor?.document === doc);
      await vscode.commands.executeCommand("undo");
      await waitFor("undo to bring the old text back", () => doc.getText() === MAIN_TS);
      assert.ok(await doc.save(), "the document was saved");
    },
  },
  {
    name: "host | a path outside the workspace folders is a JSON-RPC error",
    fn: async () => {
      const text = await promptText("read /etc/hostname");
      assert.match(text, /error: -32602 .*outside the workspace folders/);
    },
  },
  {
    name: "host | terminal/create runs in the terminal panel; terminal/output returns its output and exit status",
    fn: async () => {
      const NAME = "Agent: /bin/sh";
      const opened: vscode.Terminal[] = [];
      const closed: vscode.Terminal[] = [];
      const listeners = [
        vscode.window.onDidOpenTerminal((t) => t.name === NAME && opened.push(t)),
        vscode.window.onDidCloseTerminal((t) => t.name === NAME && closed.push(t)),
      ];
      try {
        const text = await promptText("terminal echo from-the-agent");
        assert.match(text, /exit: 0\nfrom-the-agent/);
        const shown = await waitFor("the agent's terminal in the panel", () => opened[0]);
        // The agent released it: the panel closes it.
        await waitFor("the released terminal to close", () => closed.includes(shown));
        assert.ok(!vscode.window.terminals.includes(shown), "the released terminal is gone from the panel");
      } finally {
        for (const l of listeners) l.dispose();
      }
    },
  },
  {
    name: "settings | acpRemote.permissions.answeredBy = client applies at once: the editor is not asked",
    fn: async () => {
      await setSetting("permissions.answeredBy", "client");
      try {
        const r = await remote();
        const { ctx, sessionId } = await openSession(r);
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Client only" }] });
        const ask = await waitFor("the remote client's permission request", () => r.asks.find((a) => a.params.toolCall.title === "Client only"));
        assert.equal(entry("Client only"), undefined, "the editor was not asked");
        ask.answer({ outcome: { outcome: "selected", optionId: "allow_once" } });
        assert.equal((await turn).stopReason, "end_turn");
        assert.equal(entry("Client only"), undefined);
      } finally {
        await setSetting("permissions.answeredBy", undefined);
      }
    },
  },
  {
    name: "settings | a change that needs a restart (acpRemote.agents) asks for one",
    // The question is a notification: only a browser sees it.
    needs: "browser",
    fn: async () => {
      const agents = vscode.workspace.getConfiguration("acpRemote").get<Array<Record<string, unknown>>>("agents") ?? [];
      try {
        await setSetting("agents", agents.map((a) => ({ ...a, env: { ACP_TEST: "1" } })));
        if (hasBrowser()) await notificationShows("acpRemote.agents after a restart");
        assert.equal(api.state, "running", "nothing restarts without the person's yes");
      } finally {
        await setSetting("agents", agents);
      }
    },
  },
  {
    name: "commands | Rotate Access Token: once confirmed, the new token works at once and the old one gets 401",
    needs: "browser",
    fn: async () => {
      const url = `${api.server!.url}/v1/models`;
      const statusWith = async (token: string): Promise<number> => (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status;
      const old = await api.token();
      assert.equal(await statusWith(old), 200);
      const rotating = vscode.commands.executeCommand("acpRemote.rotateToken");
      await inNotificationCentre(() => ui("clickNotificationButton", { label: "Rotate" }));
      await rotating;
      const fresh = await api.token();
      assert.notEqual(fresh, old);
      assert.equal(await statusWith(fresh), 200);
      assert.equal(await statusWith(old), 401);
    },
  },
  // Agents from the ACP Registry (extension/add-agent.ts).
  ...addAgentCases,
  // Deferred completions from the editor (extension/deferred), on the running server.
  ...deferredCases,
  // Device pairing (extension/pairing): Connect a Device, the device in the tree, Revoke.
  ...pairingCases,
  {
    name: "regression: Start Server while a start is in progress joins it (one client, one sidecar; a second one leaked)",
    fn: async () => {
      await vscode.commands.executeCommand("acpRemote.stop");
      await waitFor("the stopped sidecar to exit", () => sidecarProcesses().length === 0);
      // As the auto-start and a Start Server command at the same moment.
      await Promise.all([vscode.commands.executeCommand("acpRemote.start"), vscode.commands.executeCommand("acpRemote.start")]);
      await waitFor("the server to run", () => api.state === "running" && api.status !== undefined);
      assert.deepEqual(sidecarProcesses(), [api.sidecarPid], "one sidecar, the one the views show");
    },
  },
  {
    name: "fault | the sidecar is killed: it comes back and the views recover",
    fn: async () => {
      const pid = api.sidecarPid;
      assert.ok(pid, "the sidecar reports its pid");
      process.kill(pid, "SIGKILL");
      await waitFor("a new sidecar", () => api.state === "running" && api.sidecarPid !== undefined && api.sidecarPid !== pid && api.status !== undefined);
      if (hasBrowser()) {
        // The Overview says the server runs again (the Deferred view below may name "fixture" all along).
        const tree = await ui<{ text: string }>("treeText", { contains: "running" });
        assert.doesNotMatch(tree.text, /Starting the server/);
      }
    },
  },
  // A turn the sidecar's death cuts off ends visibly in the tab and on a phone (crash.ts).
  ...crashCases({ api: () => api, remote }),
  {
    name: "fault | a port already in use: a clear message with the fix",
    fn: async () => {
      const blocker: Server = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
      const port = (blocker.address() as { port: number }).port;
      try {
        await vscode.commands.executeCommand("acpRemote.stop");
        await setSetting("server.port", port);
        await vscode.commands.executeCommand("acpRemote.start");
        await waitFor("the failure", () => api.state === "failed");
        assert.match(api.lastError ?? "", new RegExp(`Port ${port} is already in use`));
        assert.match(api.lastError ?? "", /acpRemote\.server\.port/);
        if (hasBrowser()) await notificationShows("already in use");
      } finally {
        blocker.close();
        await setSetting("server.port", 0);
      }
    },
  },
  {
    name: "fault | a malformed agent command in settings: a clear error naming the setting",
    fn: async () => {
      const agents = vscode.workspace.getConfiguration("acpRemote").get("agents");
      try {
        await setSetting("agents", [{ name: "broken", command: "", args: [] }]);
        await vscode.commands.executeCommand("acpRemote.start");
        await waitFor("the failure", () => api.state === "failed");
        assert.match(api.lastError ?? "", /acpRemote\.agents\[0\]\.command/);
      } finally {
        await setSetting("agents", agents);
      }
      await startServer();
    },
  },
];

/** The run after the window reload the first run ends with: what survived it. */
async function runAfterReload(mark: ReloadMark & TabsReloadMark): Promise<void> {
  api = await extensionApi();
  // The tabs case first: it needs the server as the reload left it (stopped), and leaves it so.
  const failed = mark.failedBefore + (await runCases([...tabsAfterReloadCases(mark, { api: () => api }), ...afterReloadCases(mark, { startServer })]));
  await vscode.commands.executeCommand("acpRemote.stop");
  if (failed > 0) throw new Error(`${failed} extension test(s) failed`);
}

export async function run(): Promise<void> {
  const mark = takeReloadMark<ReloadMark & TabsReloadMark>();
  if (mark) return runAfterReload(mark);
  const failed = await runCases(cases);
  for (const r of remotes) r.close();
  // A draft waits in a session tab: the run ends with a window reload, and the suite runs again to check what survived it.
  const reload = reloadPending() ?? tabsReloadPending();
  // In front, so the reloaded window restores it at once (a tab behind others is restored only when shown).
  if (reload) await vscode.commands.executeCommand("acpRemote.openSession", reload);
  // Taken while the server runs: the tab's name as it was before anything went down.
  const tabsMark = await tabsReloadMark(api, reload);
  await vscode.commands.executeCommand("acpRemote.stop");
  if (reload) {
    markReload({ sessionId: reload, failedBefore: failed, ...tabsMark } satisfies ReloadMark & TabsReloadMark);
    await vscode.commands.executeCommand("workbench.action.reloadWindow");
    // This extension host ends with the window; the next one reports.
    await new Promise(() => undefined);
  }
  if (failed > 0) throw new Error(`${failed} extension test(s) failed`);
}
