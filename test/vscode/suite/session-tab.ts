// In-editor cases of the session tab (extension/panels/session-panel.ts, drawn
// by web/session-view): New Session and a prompt from the tab, a remote
// client's session followed live, a permission answered in the tab while the
// remote client's request is withdrawn, and the draft kept across a window
// reload (the last two halves of the run: before and after the reload). They
// need the server running with the fixture and demo agents.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { methods, type ClientContext } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import { agentText, type RemoteClient } from "./remote-client.ts";
import { ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";

/** The session tab of a session (its webview's #root). */
export const tabOf = (sessionId: string): string => `#root[data-session-id="${sessionId}"]`;
const COMPOSER = "textarea.sv-input";
export const DRAFT = "A draft that outlives the window:\nline two";

export interface SessionTabDeps {
  api(): AcpRemoteApi;
  /** A remote client the suite closes at its end. */
  remote(agent?: string): Promise<RemoteClient>;
}

/** What the cases after the reload need from the ones before. */
export interface ReloadMark {
  sessionId: string;
  failedBefore: number;
}

async function remoteSession(r: RemoteClient): Promise<{ ctx: ClientContext; sessionId: string }> {
  return r.run(async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
    return { ctx, sessionId };
  });
}

/** A session a remote client started, opened in its tab, once the tab is drawn. */
async function remoteSessionInTab(r: RemoteClient): Promise<{ ctx: ClientContext; sessionId: string }> {
  const opened = await remoteSession(r);
  await vscode.commands.executeCommand("acpRemote.openSession", opened.sessionId);
  await ui("webviewCount", { frameSelector: tabOf(opened.sessionId), selector: tabOf(opened.sessionId) });
  return opened;
}

/** Brings the session's tab in front (a click reaches only what shows). */
async function inFront(sessionId: string): Promise<void> {
  await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
}

async function logText(sessionId: string, contains: string): Promise<string> {
  return (await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} [role=log]`, contains })).text;
}

/**
 * Sets the colour theme; with a session, waits until that session's webview
 * has the theme's colours (VS Code sets its body's theme kind in the same
 * message as the colours).
 */
async function setTheme(theme: string | undefined, shown?: { sessionId: string; kind: "vscode-light" | "vscode-dark" }): Promise<void> {
  await vscode.workspace.getConfiguration("workbench").update("colorTheme", theme, vscode.ConfigurationTarget.Global);
  if (!shown) return;
  const themed = `body[data-vscode-theme-kind="${shown.kind}"] ${tabOf(shown.sessionId)}`;
  await waitFor(`the ${shown.kind} theme in the tab`, async () => (await ui<{ count: number }>("webviewCount", { frameSelector: tabOf(shown.sessionId), selector: themed })).count === 1);
}

/** The session New Session started. */
let demoSessionId = "";
/** Set once a draft waits in a tab for the reload at the end of the run. */
let draftSessionId: string | undefined;

export function sessionTabCases(deps: SessionTabDeps): TestCase[] {
  return [
    {
      name: "session tab | New Session: the agent from the quick pick, a prompt typed in the tab, the demo's turn streamed in (screenshots)",
      needs: "browser",
      fn: async () => {
        const started = Promise.resolve(vscode.commands.executeCommand<string | undefined>("acpRemote.newSession"));
        await ui("quickPick", { label: "demo" });
        const sessionId = await started;
        assert.ok(typeof sessionId === "string" && sessionId !== "", "the command resolves with the new session's id");
        demoSessionId = sessionId;
        await waitFor("the new session in the status", () => deps.api().status?.sessions.find((s) => s.sessionId === sessionId && s.agent === "demo"));
        const prompt = "Show me what you can do";
        await inFront(sessionId);
        // Typed once the tab shows the session (the journal redraws the view when it arrives).
        const connected = await ui<{ value: string | null }>("webviewAttribute", { selector: `${tabOf(sessionId)} .sv-root`, name: "data-connection", equals: "connected" });
        assert.equal(connected.value, "connected", "the tab opened its session");
        await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: COMPOSER, text: prompt, press: "Enter" });
        // The demo asks before its edit: the request shows inline in the tab.
        const pending = await waitFor("the demo's permission request", () =>
          deps.api().permissions().find((e) => e.state === "pending" && e.info.sessionId === sessionId),
        );
        const card = `${tabOf(sessionId)} .sv-perm[data-request-id="${pending.info.permissionId}"]`;
        await inFront(sessionId);
        await ui("clickWebview", { frameSelector: card, selector: `${card} button[data-option-id="allow_once"]` });
        const text = await logText(sessionId, "That is the whole tour");
        assert.match(text, /You approved the edit \(allow once\)/);
        // The prompt shows once: from the journal's user_message_chunk, not also echoed by the tab.
        const users = await ui<{ count: number }>("webviewCount", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} article.sv-user` });
        assert.equal(users.count, 1, "one user message");
        assert.match(text, new RegExp(prompt));
        const settled = await ui<{ value: string | null }>("webviewAttribute", { selector: card, name: "data-settled", equals: "answered here" });
        assert.equal(settled.value, "answered here", "the tab's answer won");
        assert.equal(deps.api().permissions().find((e) => e.info.permissionId === pending.info.permissionId)?.chosenOptionId, "allow_once");
        // The turn is over: the composer takes a prompt again.
        await ui("webviewAttribute", { selector: `${tabOf(sessionId)} .sv-turn-end`, name: "data-stop-reason", equals: "end_turn" });
        // The tab alone in the window (the permissions panel opened beside it when the demo asked).
        await vscode.commands.executeCommand("workbench.action.closeEditorsInOtherGroups");
        await vscode.commands.executeCommand("workbench.action.closeSidebar");
        try {
          await setTheme("Default Light Modern", { sessionId, kind: "vscode-light" });
          await ui("screenshot", { name: "editor-session-light", frameSelector: tabOf(sessionId) });
          await setTheme("Default Dark Modern", { sessionId, kind: "vscode-dark" });
          await ui("screenshot", { name: "editor-session-dark", frameSelector: tabOf(sessionId) });
        } finally {
          await setTheme(undefined);
          await vscode.commands.executeCommand("workbench.action.toggleSidebarVisibility");
        }
      },
    },
    {
      name: "session tab | a session a remote client started opens in the tab and shows its turns live; Stop cancels the remote turn",
      needs: "browser",
      fn: async () => {
        const r = await deps.remote();
        const { ctx, sessionId } = await remoteSessionInTab(r);
        // A turn the remote client sends after the tab opened shows as it streams.
        const first = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo hello from the phone" }] });
        assert.equal(first.stopReason, "end_turn");
        const text = await logText(sessionId, "hello from the phone");
        assert.match(text, /echo hello from the phone/, "the remote prompt shows too");
        // A long turn: the tab shows it running, and its Stop cancels it for the remote client.
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo working on it\nslow 120000" }] });
        await logText(sessionId, "working on it");
        const status = await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} .sv-turn-status`, contains: "The agent is working" });
        assert.match(status.text, /Esc to stop/);
        await inFront(sessionId);
        await ui("clickWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} .sv-stop` });
        assert.equal((await turn).stopReason, "cancelled");
        await ui("webviewCount", { frameSelector: `${tabOf(sessionId)} .sv-turn-end[data-stop-reason="cancelled"]`, selector: tabOf(sessionId) });
        assert.match(agentText(r.updates, sessionId), /hello from the phone/);
      },
    },
    {
      name: "session tab | a permission answered in the tab wins: the remote client's request is withdrawn; one the remote answers loses its buttons in the tab, which says the remote client answered",
      needs: "browser",
      fn: async () => {
        const r = await deps.remote();
        const { ctx, sessionId } = await remoteSessionInTab(r);
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Deploy from the tab" }] });
        const ask = await waitFor("the remote client's request", () => r.asks.find((a) => a.params.toolCall.title === "Deploy from the tab"));
        const pending = await waitFor("the editor's request", () => deps.api().permissions().find((e) => e.state === "pending" && e.info.toolCall.title === "Deploy from the tab"));
        const card = `${tabOf(sessionId)} .sv-perm[data-request-id="${pending.info.permissionId}"]`;
        await inFront(sessionId);
        await ui("clickWebview", { frameSelector: card, selector: `${card} button[data-option-id="allow_once"]` });
        assert.equal((await turn).stopReason, "end_turn");
        assert.match(agentText(r.updates, sessionId), /outcome: selected allow_once/);
        await waitFor("the remote client's request to be withdrawn ($/cancel_request)", () => ask.signal.aborted);
        assert.equal((await ui<{ value: string | null }>("webviewAttribute", { selector: card, name: "data-settled", equals: "answered here" })).value, "answered here");

        const second = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Answered on the phone" }] });
        const remoteAsk = await waitFor("the remote client's request", () => r.asks.find((a) => a.params.toolCall.title === "Answered on the phone"));
        const shown = await waitFor("the editor's request", () => deps.api().permissions().find((e) => e.info.toolCall.title === "Answered on the phone"));
        const shownCard = `${tabOf(sessionId)} .sv-perm[data-request-id="${shown.info.permissionId}"]`;
        await ui("webviewCount", { frameSelector: shownCard, selector: `${shownCard} button` });
        remoteAsk.answer({ outcome: { outcome: "selected", optionId: "reject_once" } });
        assert.equal((await second).stopReason, "end_turn");
        // Answered by the remote client, not withdrawn: the tab says who answered what.
        assert.equal((await ui<{ value: string | null }>("webviewAttribute", { selector: shownCard, name: "data-settled", equals: "answered elsewhere" })).value, "answered elsewhere");
        assert.equal((await ui<{ text: string }>("webviewText", { selector: `${shownCard} .sv-perm-outcome`, contains: "Rejected" })).text.trim(), "Rejected on a remote client");
        const buttons = await ui<{ count: number }>("webviewCount", { frameSelector: shownCard, selector: `${shownCard} button` });
        assert.equal(buttons.count, 0, "a withdrawn request has no option buttons left");
      },
    },
    {
      name: "session tab | a draft typed in the tab stays while the server restarts (and after the window reload that ends the run)",
      needs: "browser",
      fn: async () => {
        assert.ok(demoSessionId, "the New Session case left a tab");
        await inFront(demoSessionId);
        await ui("typeWebview", { frameSelector: tabOf(demoSessionId), selector: `${tabOf(demoSessionId)} ${COMPOSER}`, text: DRAFT });
        await vscode.commands.executeCommand("acpRemote.restart");
        await waitFor("the server to run again", () => deps.api().state === "running" && deps.api().status !== undefined);
        await logText(demoSessionId, "That is the whole tour");
        const kept = await ui<{ value: string }>("webviewInputValue", { frameSelector: tabOf(demoSessionId), selector: `${tabOf(demoSessionId)} ${COMPOSER}` });
        assert.equal(kept.value, DRAFT);
        const caret = await ui<{ focused: boolean }>("webviewFocused", { frameSelector: tabOf(demoSessionId), selector: `${tabOf(demoSessionId)} ${COMPOSER}` });
        assert.equal(caret.focused, true, "the box being typed in keeps the caret when the view is drawn anew");
        draftSessionId = demoSessionId;
      },
    },
  ];
}

/** The session whose tab holds a draft when the run ends: the suite then reloads the window. */
export function reloadPending(): string | undefined {
  return draftSessionId;
}

/** The cases after the reload: the tab came back with its draft, and draws its session once the server runs. */
export function afterReloadCases(mark: ReloadMark, deps: { startServer(): Promise<void> }): TestCase[] {
  return [
    {
      name: "session tab | after a window reload the tab is back with its draft",
      needs: "browser",
      fn: async () => {
        const draft = await ui<{ value: string }>("webviewInputValue", { frameSelector: tabOf(mark.sessionId), selector: `${tabOf(mark.sessionId)} ${COMPOSER}` });
        assert.equal(draft.value, DRAFT);
        await deps.startServer();
        await logText(mark.sessionId, "That is the whole tour");
        const again = await ui<{ value: string }>("webviewInputValue", { frameSelector: tabOf(mark.sessionId), selector: `${tabOf(mark.sessionId)} ${COMPOSER}` });
        assert.equal(again.value, DRAFT, "drawing the session anew keeps the draft");
      },
    },
  ];
}
