// The status item's menu, as rust-analyzer's: a click on the item lists what
// can be done with the server in the state it is in (start it, or stop and
// restart it), then the everyday commands: a new session, a device to pair,
// the permission requests (with how many wait) and the log.
import * as vscode from "vscode";
import { Command, type CommandId } from "../command-ids.ts";
import type { CommandSpec } from "../command-spec.ts";
import type { Ctx, ServerState } from "../ctx.ts";

export interface StatusMenuItem extends vscode.QuickPickItem {
  /** The command the item runs; separators have none. */
  command?: CommandId;
}

function separator(label: string): StatusMenuItem {
  return { label, kind: vscode.QuickPickItemKind.Separator };
}

/** The items for a server in `state` with `pending` permission requests waiting. */
function statusMenuItems(state: ServerState, pending: number): StatusMenuItem[] {
  const server: StatusMenuItem[] =
    state === "running"
      ? [
          { label: "$(debug-restart) Restart Server", command: Command.restart },
          { label: "$(debug-stop) Stop Server", command: Command.stop },
        ]
      : state === "stopped" || state === "failed"
        ? [{ label: "$(play) Start Server", command: Command.start }]
        : // Starting: nothing to do with the server until it runs or fails.
          [];
  const work: StatusMenuItem[] = [
    { label: "$(add) New Session", command: Command.newSession },
    { label: "$(device-mobile) Connect a Device", command: Command.connectDevice },
    { label: pending > 0 ? `$(shield) Show Permissions (${pending} waiting)` : "$(shield) Show Permissions", command: Command.showPermissions },
    { label: "$(output) Show Log", command: Command.showLog },
  ];
  // The first item is the one Enter picks: Start when the server is down, never Stop or Restart.
  if (state === "running") return [separator("Work"), ...work, separator("Server"), ...server];
  return [...(server.length > 0 ? [separator("Server"), ...server] : []), separator("Work"), ...work];
}

/** What the menu's title says of the server. */
export function describeServer(ctx: Ctx): string {
  if (ctx.state === "running" && ctx.server) return `running at ${ctx.server.url}`;
  if (ctx.state === "failed" && ctx.lastError) return `failed: ${ctx.lastError}`;
  return ctx.state;
}

async function showStatusMenu(ctx: Ctx): Promise<void> {
  const pick = await vscode.window.showQuickPick(statusMenuItems(ctx.state, ctx.permissions.pendingCount), { title: `ACP Remote: ${describeServer(ctx)}` });
  if (pick?.command) await vscode.commands.executeCommand(pick.command);
}

export const STATUS_MENU_COMMANDS: readonly CommandSpec[] = [{ id: Command.showStatusMenu, whenDown: "run", run: (ctx) => showStatusMenu(ctx) }];
