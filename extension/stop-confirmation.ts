// Stop Server and Restart Server end every remote connection: a paired phone
// in the middle of a turn, an ACP client. While any is attached they ask
// first (a modal naming how many and who); with none attached they act at
// once. Callers that must not be asked (other extensions, tests) pass
// `{ confirm: false }`; `acpRemote.server.confirmStop` turns the question off.
import * as vscode from "vscode";
import type { ConnectionInfo, StatusSnapshot } from "../protocol/control.ts";
import { connectionName } from "../protocol/names.ts";
import type { Ctx } from "./ctx.ts";
import { DEFAULT_STOP_QUESTION_NAMES } from "./limits.ts";

export type StopKind = "stop" | "restart";

/** The argument Stop Server and Restart Server take from callers that ask the person themselves. */
export interface StopOptions {
  confirm?: boolean;
}

function wantsConfirmation(arg: unknown): boolean {
  return !(typeof arg === "object" && arg !== null && (arg as StopOptions).confirm === false);
}

/** "Tablet (ws)": the connection's name (its device's, else its person's) and its transport profile. */
function describeConnection(connection: ConnectionInfo, status: StatusSnapshot): string {
  return `${connectionName(connection, status.devices)} (${connection.profile})`;
}

/** Who is connected: the first few by name, then how many more. */
function whoIsConnected(connections: ConnectionInfo[], status: StatusSnapshot): string {
  const named = connections.slice(0, DEFAULT_STOP_QUESTION_NAMES).map((c) => describeConnection(c, status));
  const more = connections.length - named.length;
  return `${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/** The question for the connections attached now, or undefined when none is. */
export function stopQuestion(kind: StopKind, status: StatusSnapshot | undefined): { message: string; detail: string; button: string } | undefined {
  const connections = status?.connections ?? [];
  if (!status || connections.length === 0) return undefined;
  const count = connections.length === 1 ? "1 client is" : `${connections.length} clients are`;
  const connected = `${count} connected: ${whoIsConnected(connections, status)}.`;
  return kind === "stop"
    ? { message: `Stop the ACP Remote server? ${connected}`, detail: "They will be disconnected.", button: "Stop Server" }
    : { message: `Restart the ACP Remote server? ${connected}`, detail: "They will be disconnected until the server is back.", button: "Restart Server" };
}

/** Whether to go on: asks (modal) while clients are attached, unless told not to. */
export async function confirmStop(ctx: Ctx, kind: StopKind, arg: unknown): Promise<boolean> {
  if (!ctx.isRunning || !wantsConfirmation(arg) || !ctx.config.confirmStop) return true;
  // The status as it is now: a client may have come or gone since the last push.
  await ctx.refreshStatus();
  const question = stopQuestion(kind, ctx.status);
  if (!question) return true;
  const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, question.button);
  return choice === question.button;
}
