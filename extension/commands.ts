// Every command, as a table. Each knows what it does while the server is
// down (`whenDown`): start it, work from stored state, or say it is not running.
import * as vscode from "vscode";
import { ControlRequest } from "../protocol/control.ts";
import { sessionName } from "../protocol/names.ts";
import { Command } from "./command-ids.ts";
import type { CommandSpec, Views } from "./command-spec.ts";
import type { Ctx } from "./ctx.ts";
import { newSession } from "./new-session.ts";
import { addAgent } from "./add-agent.ts";
import { authenticateAgent } from "./authenticate-agent.ts";
import { PAIRING_COMMANDS } from "./pairing/commands.ts";
import { confirmStop } from "./stop-confirmation.ts";
import { STATUS_MENU_COMMANDS } from "./views/status-menu.ts";
import { WALKTHROUGH_COMMANDS } from "./views/walkthrough.ts";
import { TREE_VIEW_ID } from "./views/tree.ts";
import { sessionDescription, sessionFollowers } from "./views/session-labels.ts";

async function pickSession(ctx: Ctx, views: Views): Promise<string | undefined> {
  await ctx.refreshStatus();
  const sessions = ctx.status?.sessions ?? [];
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage("ACP Remote: no sessions yet. Connect a remote client to the server.");
    return undefined;
  }
  if (sessions.length === 1) return sessions[0]!.sessionId;
  const pick = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: sessionName(s), description: sessionDescription(s, sessionFollowers(s, ctx.status!, views.sessions.isOpen(s.sessionId))), sessionId: s.sessionId })),
    { title: "ACP Remote: open a session" },
  );
  return pick?.sessionId;
}

export const COMMANDS: readonly CommandSpec[] = [
  // Not waiting for the message: it resolves only once closed, and a caller (the walkthrough, another extension) would wait that long.
  { id: Command.start, whenDown: "run", run: (ctx) => (ctx.isRunning ? void vscode.window.showInformationMessage(`ACP Remote: already running at ${ctx.server?.url}`) : ctx.start()) },
  // Both ask first while remote clients are connected; `{ confirm: false }` does not ask (stop-confirmation.ts).
  { id: Command.stop, whenDown: "inform", run: async (ctx, _views, options) => (await confirmStop(ctx, "stop", options)) && ctx.stop() },
  { id: Command.restart, whenDown: "run", run: async (ctx, _views, options) => (await confirmStop(ctx, "restart", options)) && ctx.restart() },
  {
    id: Command.copyUrl,
    whenDown: "offerStart",
    run: async (ctx) => {
      await vscode.env.clipboard.writeText(`${ctx.server!.url}/acp`);
      void vscode.window.showInformationMessage(`ACP Remote: copied ${ctx.server!.url}/acp`);
    },
  },
  {
    id: Command.showToken,
    whenDown: "run",
    run: async (ctx) => {
      // An input box shows the token without writing it to a log or a notification history.
      await vscode.window.showInputBox({ title: "ACP Remote access token", value: await ctx.tokens.get(), prompt: "Remote clients send it as Authorization: Bearer <token>. Press Escape to close.", ignoreFocusOut: false });
    },
  },
  {
    id: Command.copyToken,
    whenDown: "run",
    run: async (ctx) => {
      await vscode.env.clipboard.writeText(await ctx.tokens.get());
      void vscode.window.showInformationMessage("ACP Remote: access token copied.");
    },
  },
  {
    id: Command.rotateToken,
    whenDown: "run",
    run: async (ctx) => {
      const rotate = "Rotate";
      const choice = await vscode.window.showWarningMessage("Rotate the access token? Clients that use the old one are refused from now on.", rotate);
      if (choice !== rotate) return;
      await ctx.rotateToken();
      void vscode.window.showInformationMessage(ctx.isRunning ? "ACP Remote: new access token in use." : "ACP Remote: new access token stored; the server uses it when it starts.");
    },
  },
  {
    id: Command.setUpstreamKey,
    whenDown: "run",
    run: async (ctx) => {
      const key = await vscode.window.showInputBox({
        title: "ACP Remote: upstream provider API key",
        prompt: "The key of the provider in acpRemote.upstream.url, kept in the editor's secret storage. Leave empty to remove it.",
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      await ctx.setUpstreamKey(key.trim());
      void vscode.window.showInformationMessage(key.trim() === "" ? "ACP Remote: upstream API key removed." : "ACP Remote: upstream API key stored.");
    },
  },
  {
    id: Command.openSessions,
    whenDown: "offerStart",
    run: async (ctx, views) => {
      const id = await pickSession(ctx, views);
      if (id) views.sessions.show(id);
    },
  },
  { id: Command.openSession, whenDown: "inform", run: (_ctx, views, sessionId) => typeof sessionId === "string" && views.sessions.show(sessionId) },
  { id: Command.addAgent, whenDown: "run", run: (ctx) => addAgent(ctx) },
  { id: Command.authenticateAgent, whenDown: "offerStart", run: (ctx, _views, agent) => authenticateAgent(ctx, agent) },
  { id: Command.newSession, whenDown: "offerStart", run: (ctx, views, agent) => newSession(ctx, views.sessions, typeof agent === "string" ? agent : undefined) },
  {
    id: Command.closeSession,
    whenDown: "inform",
    run: async (ctx, views, arg) => {
      const sessionId = typeof arg === "string" ? arg : views.sessions.activeSessionId();
      if (!sessionId) return;
      const close = "Close Session";
      const info = ctx.status?.sessions.find((s) => s.sessionId === sessionId);
      const named = info ? `"${sessionName(info)}"` : sessionId;
      // Asked as Revoke Device and Rotate Access Token ask: a warning with the one button that goes ahead.
      const choice = await vscode.window.showWarningMessage(`Close session ${named}? Its clients lose it and it cannot be resumed.`, close);
      if (choice !== close) return;
      await ctx.client().sendRequest(ControlRequest.closeSession, { sessionId });
      // Its tab goes too: the session takes no more prompts, and the person asked for it to end.
      views.sessions.close(sessionId);
    },
  },
  { id: Command.showPermissions, whenDown: "run", run: (_ctx, views) => views.permissions.show() },
  {
    id: Command.answerPermission,
    whenDown: "inform",
    run: (ctx, _views, permissionId, optionId) => {
      if (typeof permissionId !== "string" || typeof optionId !== "string" || !ctx.permissions.answer(permissionId, optionId)) {
        void vscode.window.showInformationMessage("ACP Remote: that permission request was already answered.");
      }
    },
  },
  { id: Command.showLog, whenDown: "run", run: (ctx) => ctx.log.show() },
  { id: Command.focusView, whenDown: "run", run: () => vscode.commands.executeCommand(`${TREE_VIEW_ID}.focus`) },
  ...PAIRING_COMMANDS,
  ...STATUS_MENU_COMMANDS,
  ...WALKTHROUGH_COMMANDS,
];

export function registerCommands(ctx: Ctx, views: Views): void {
  for (const spec of COMMANDS) {
    ctx.extension.subscriptions.push(
      vscode.commands.registerCommand(spec.id, async (...args: unknown[]) => {
        try {
          if (!ctx.isRunning && spec.whenDown === "inform") {
            void vscode.window.showInformationMessage("ACP Remote: the server is not running.");
            return undefined;
          }
          if (!ctx.isRunning && spec.whenDown === "offerStart") {
            const start = "Start Server";
            if ((await vscode.window.showInformationMessage("ACP Remote: the server is not running.", start)) !== start) return undefined;
            await ctx.start();
            if (!ctx.isRunning) return undefined;
          }
          return await spec.run(ctx, views, ...args);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          ctx.log.error(`${spec.id}: ${message}`);
          void vscode.window.showErrorMessage(`ACP Remote: ${message}`);
          return undefined;
        }
      }),
    );
  }
}
