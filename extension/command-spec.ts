// What a command is: the table of extension/commands.ts and the tables it
// takes in (the pairing commands) share this shape, so that neither imports the other.
import type { CommandId } from "./command-ids.ts";
import type { Ctx } from "./ctx.ts";
import type { PermissionPanel } from "./panels/permission-panel.ts";
import type { SessionPanels } from "./panels/session-panel.ts";
import type { PairingPanel } from "./pairing/pairing-panel.ts";

export interface Views {
  permissions: PermissionPanel;
  sessions: SessionPanels;
  pairing: PairingPanel;
}

export type WhenDown =
  /** Runs the same way whether the server runs or not. */
  | "run"
  /** Offers to start the server first. */
  | "offerStart"
  /** Says the server is not running. */
  | "inform";

export interface CommandSpec {
  id: CommandId;
  whenDown: WhenDown;
  run(ctx: Ctx, views: Views, ...args: unknown[]): Promise<unknown> | unknown;
}
