// Activation only: build the context, the views and the command table.
// Ctx owns the lifecycle; nothing here keeps state.
import * as vscode from "vscode";
import { createApi, type AcpRemoteApi } from "./api.ts";
import { registerCommands } from "./commands.ts";
import { Ctx } from "./ctx.ts";
import { deferredServerOf } from "./deferred/ctx-server.ts";
import { activateDeferred } from "./deferred/index.ts";
import { DiffReview } from "./diff/diff-review.ts";
import { PermissionPanel } from "./panels/permission-panel.ts";
import { SessionPanels } from "./panels/session-panel.ts";
import { PairingPanel } from "./pairing/pairing-panel.ts";
import { OverviewTree, TREE_VIEW_ID } from "./views/tree.ts";
import { StatusBar } from "./views/status-bar.ts";
import { ContextKeys } from "./views/context-keys.ts";

let current: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): AcpRemoteApi {
  const ctx = new Ctx(context);
  current = ctx;
  const sessions = new SessionPanels(ctx);
  const views = { permissions: new PermissionPanel(ctx, (sessionId) => sessions.isVisible(sessionId)), sessions, pairing: new PairingPanel(ctx) };
  const tree = new OverviewTree(ctx, sessions);
  context.subscriptions.push(
    views.permissions,
    views.sessions,
    views.pairing,
    tree,
    vscode.window.createTreeView(TREE_VIEW_ID, { treeDataProvider: tree, showCollapseAll: false }),
    new StatusBar(ctx),
    new ContextKeys(ctx),
  );
  registerCommands(ctx, views);
  // Open Diff: a proposed change in VS Code's diff editor, with its permission request's answers.
  context.subscriptions.push(new DiffReview(ctx.permissions));
  const deferredServer = deferredServerOf(ctx);
  const deferred = activateDeferred(context, deferredServer);
  context.subscriptions.push(deferredServer, deferred);
  // Untrusted workspaces get the views and commands, never a process (capabilities.untrustedWorkspaces).
  if (ctx.config.autoStart && vscode.workspace.isTrusted) void ctx.start();
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (ctx.config.autoStart) void ctx.start();
    }),
  );
  return createApi(ctx, deferred);
}

/** VS Code waits for this promise: the sidecar gets its shutdown/exit before the extension host goes. */
export async function deactivate(): Promise<void> {
  await current?.stop();
  current = undefined;
}
