// In-editor cases of reviewing a proposed edit (extension/diff): Open Diff
// from a permission request in a session tab and from the permissions panel
// opens VS Code's diff editor on the file's text before and after; Allow or
// Reject in its title bar answers exactly that request (the remote client's
// turn finishes with it) and goes once it is answered; a path in a tool card
// opens the file at its line. A remote client runs the fixture agent's
// `propose` script on the server the extension started.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { methods, type ClientContext } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import { agentText, type RemoteClient } from "./remote-client.ts";
import { ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";

export interface DiffDeps {
  api(): AcpRemoteApi;
  /** A remote client the suite closes at its end. */
  remote(agent?: string): Promise<RemoteClient>;
}

const SCHEME = "acp-remote-diff";
const OLD = "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n";
const NEW = "export const a = 1;\nexport const b = 20;\nexport const c = 3;\n";
/** The editor title's actions of the editor group in front. */
const TITLE_ACTIONS = ".editor-group-container.active .editor-actions .action-label";

const tabOf = (sessionId: string): string => `#root[data-session-id="${sessionId}"]`;

/** The file the agent proposes to change, as it is on disk. */
function reviewFile(name: string): string {
  const path = join(workspaceDir(), name);
  writeFileSync(path, OLD);
  return path;
}

/** The fixture's script that names the session, proposes NEW for `path` (the location at line 2) and waits for the answer. */
const propose = (path: string): string => `title Make b twenty\npropose ${path} 2 ${NEW.replace(/\n/g, "\\n")}`;

async function remoteSession(r: RemoteClient): Promise<{ ctx: ClientContext; sessionId: string }> {
  return r.run(async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
    return { ctx, sessionId };
  });
}

/** The diff editor in front, when it shows a change of ours. */
function frontDiff(): vscode.TabInputTextDiff | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff && input.modified.scheme === SCHEME ? input : undefined;
}

/** Waits for the diff editor of `path` in front; checks its sides hold the old and the proposed text, and its title. */
async function diffShows(path: string): Promise<void> {
  const diff = await waitFor(`the diff editor of ${path}`, () => {
    const d = frontDiff();
    return d !== undefined && d.modified.path === vscode.Uri.file(path).path ? d : undefined;
  });
  assert.equal((await vscode.workspace.openTextDocument(diff.original)).getText(), OLD, "the left side is the file's text now");
  assert.equal((await vscode.workspace.openTextDocument(diff.modified)).getText(), NEW, "the right side is the proposed text");
  assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.label, `${path.split("/").pop()} (proposed)`);
}

/** The labels of the front editor's title actions. */
async function titleActions(): Promise<string[]> {
  const { elements } = await ui<{ elements: Array<{ label: string | null }> }>("pageElements", { selector: TITLE_ACTIONS });
  return elements.map((e) => e.label ?? "");
}

/** Waits until the diff editor's title bar offers the request's answers, or no longer does. */
async function answersShown(shown: boolean): Promise<void> {
  await waitFor(`the diff editor's Allow ${shown ? "to show" : "to go"}`, async () => (await titleActions()).includes("Allow") === shown);
}

export function diffCases(deps: DiffDeps): TestCase[] {
  let tabSession: { sessionId: string; file: string } | undefined;
  return [
    {
      name: "diff | Open Diff from a permission request in the session tab: the diff editor shows the old and the proposed text; Allow in its title bar answers the request, the remote turn finishes with it, and Allow goes (screenshot)",
      needs: "browser",
      fn: async () => {
        const file = reviewFile("review.ts");
        const r = await deps.remote();
        const { ctx, sessionId } = await remoteSession(r);
        await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
        await ui("webviewCount", { frameSelector: tabOf(sessionId), selector: tabOf(sessionId) });
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: propose(file) }] });
        const pending = await waitFor("the editor's permission request", () => deps.api().permissions().find((e) => e.state === "pending" && e.info.sessionId === sessionId));
        const card = `${tabOf(sessionId)} .sv-perm[data-request-id="${pending.info.permissionId}"]`;
        await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
        await ui("clickWebview", { frameSelector: card, selector: `${card} .sv-open-diff` });
        await diffShows(file);
        await answersShown(true);
        await ui("screenshot", { name: "editor-diff-review" });
        await ui("clickPage", { selector: `${TITLE_ACTIONS}[aria-label="Allow"]` });
        assert.equal((await turn).stopReason, "end_turn");
        assert.match(agentText(r.updates, sessionId), /outcome: selected allow_once/);
        const entry = deps.api().permissions().find((e) => e.info.permissionId === pending.info.permissionId);
        assert.equal(entry?.chosenOptionId, "allow_once");
        await answersShown(false);
        // The tab says where it was answered.
        await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
        const outcome = await ui<{ text: string }>("webviewText", { selector: `${card} .sv-perm-outcome`, contains: "in the editor" });
        assert.equal(outcome.text.trim(), "Allowed in the editor — Allow once");
        tabSession = { sessionId, file };
      },
    },
    {
      name: "diff | Open Diff from the permissions panel: the same diff editor; Reject in its title bar answers the request, the remote turn finishes with it, and Reject goes",
      needs: "browser",
      fn: async () => {
        const file = reviewFile("review-panel.ts");
        const r = await deps.remote();
        const { ctx, sessionId } = await remoteSession(r);
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: propose(file) }] });
        const pending = await waitFor("the editor's permission request", () => deps.api().permissions().find((e) => e.state === "pending" && e.info.sessionId === sessionId));
        await vscode.commands.executeCommand("acpRemote.showPermissions");
        const card = `section[data-permission-id="${pending.info.permissionId}"]`;
        await ui("clickWebview", { frameSelector: card, selector: `${card} button.open-diff` });
        await diffShows(file);
        await waitFor("the diff editor's Reject", async () => (await titleActions()).includes("Reject"));
        await ui("clickPage", { selector: `${TITLE_ACTIONS}[aria-label="Reject"]` });
        assert.equal((await turn).stopReason, "end_turn");
        assert.match(agentText(r.updates, sessionId), /outcome: selected reject_once/);
        await waitFor("the diff editor's Reject to go", async () => !(await titleActions()).includes("Reject"));
        // The panel says who answered what.
        const outcome = await ui<{ text: string }>("webviewText", { selector: `${card} .outcome`, contains: "Rejected" });
        assert.equal(outcome.text.trim(), "Rejected in the editor");
      },
    },
    {
      name: "diff | a path in a tool card opens the file at its line",
      needs: "browser",
      fn: async () => {
        assert.ok(tabSession, "the first case left a tab with a tool card");
        const { sessionId, file } = tabSession;
        await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
        const link = `${tabOf(sessionId)} .sv-tool .sv-locations .sv-path-link`;
        await ui("clickWebview", { frameSelector: link, selector: link });
        const editor = await waitFor(`${file} in front`, () => {
          const e = vscode.window.activeTextEditor;
          return e?.document.uri.fsPath === file ? e : undefined;
        });
        assert.equal(editor.selection.active.line, 1, "at line 2 (ACP counts from 1)");
      },
    },
  ];
}
