// What a session's history holds beside the agent's own updates: where each
// prompt turn ended, and how each permission request was settled. A client
// that watches a turn learns both from the prompt's answer and from the
// permission request and its withdrawal; a replay (session/load,
// session/attach, the editor's open) has neither, so the journal keeps them
// as marks, and the replay carries each as a `session_info_update` that
// changes nothing and holds the mark under `_meta.acpRemote`. An ACP client
// that does not know the marks gets valid updates and ignores them (ACP
// extensibility: `_meta` is free for implementations to use); the session
// view draws them as it drew the live turn.
//
// Types only from the SDK, so the browser bundles can use this file.
import type { PermissionOption, RequestPermissionOutcome, SessionUpdate, StopReason, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { AcpExt } from "./acp.ts";

/** The `_meta` key of the server's own fields (protocol/acp.ts spells it too; the type keeps both the same). */
const META_KEY: (typeof AcpExt)["metaKey"] = "acpRemote";

/** Why a turn ended without its agent's answer: the agent process died, or the server stopped while it ran. */
export type TurnInterruption = "agent-exited" | "server-stopped";

/** What a person reads of an interrupted turn: the error of its prompt begins with it. */
export const INTERRUPTION_WORDS: Readonly<Record<TurnInterruption, string>> = {
  "agent-exited": "Turn interrupted: the agent exited",
  "server-stopped": "Turn interrupted: the server stopped",
};

/**
 * A prompt turn ended: with the agent's stop reason, or with an error (the
 * prompt's error message), which says why when the turn was interrupted.
 */
export type TurnEndMark = { stopReason: StopReason } | { error: string; interrupted?: TurnInterruption };

/**
 * Who settled a permission request: a client, the editor or a notification
 * answered, or it was withdrawn (the agent gave up, the wait timed out, the
 * turn was cancelled, the turn was interrupted).
 */
export type PermissionSettledBy = "client" | "editor" | "notification" | "agent" | "timeout" | "cancel" | "interrupted";

/** A permission request as it was asked, and how it was settled. */
export interface PermissionMark {
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
  outcome: RequestPermissionOutcome;
  settledBy: PermissionSettledBy;
  /** The paired device that answered, by the name it was given, when a device did. */
  device?: string;
}

/**
 * A permission request as it was asked, journaled while it waits (the view
 * draws nothing for it). The mark that settles it is the next permission mark
 * of the same tool call.
 */
export interface PermissionAskedMark {
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
}

export type HistoryMark = { turnEnd: TurnEndMark } | { permission: PermissionMark } | { permissionAsked: PermissionAskedMark };

/** The update that carries a mark in the journal and in a replay. */
export function markUpdate(mark: HistoryMark): SessionUpdate {
  return { sessionUpdate: "session_info_update", _meta: { [META_KEY]: mark } };
}

/**
 * Whether the update is the mark of a turn's end: a session's history is cut
 * into turns there (the journal's compaction and the pages of a replay).
 */
export function endsTurn(update: SessionUpdate): boolean {
  if (update.sessionUpdate !== "session_info_update") return false;
  const mark = readMark(update);
  return mark !== undefined && "turnEnd" in mark;
}

/** The mark an update carries, if it is one. */
export function readMark(update: SessionUpdate): HistoryMark | undefined {
  if (update.sessionUpdate !== "session_info_update") return undefined;
  const ours = update._meta?.[META_KEY];
  if (typeof ours !== "object" || ours === null) return undefined;
  const mark = ours as Partial<{ turnEnd: unknown; permission: unknown; permissionAsked: unknown }>;
  const turnEnd = mark.turnEnd as Partial<{ stopReason: unknown; error: unknown; interrupted: unknown }> | undefined;
  if (typeof turnEnd === "object" && turnEnd !== null) {
    if (typeof turnEnd.stopReason === "string") return { turnEnd: { stopReason: turnEnd.stopReason as StopReason } };
    if (typeof turnEnd.error === "string") {
      const interrupted = isInterruption(turnEnd.interrupted) ? turnEnd.interrupted : undefined;
      return { turnEnd: interrupted === undefined ? { error: turnEnd.error } : { error: turnEnd.error, interrupted } };
    }
    return undefined;
  }
  const asked = mark.permissionAsked as Partial<PermissionAskedMark> | undefined;
  if (typeof asked === "object" && asked !== null) {
    if (typeof asked.toolCall !== "object" || asked.toolCall === null || typeof asked.toolCall.toolCallId !== "string" || !Array.isArray(asked.options)) return undefined;
    return { permissionAsked: asked as PermissionAskedMark };
  }
  const permission = mark.permission as Partial<PermissionMark> | undefined;
  if (
    typeof permission === "object" &&
    permission !== null &&
    typeof permission.toolCall === "object" &&
    permission.toolCall !== null &&
    Array.isArray(permission.options) &&
    typeof permission.outcome === "object" &&
    permission.outcome !== null
  ) {
    return { permission: permission as PermissionMark };
  }
  return undefined;
}

function isInterruption(value: unknown): value is TurnInterruption {
  return value === "agent-exited" || value === "server-stopped";
}

/**
 * The update that ends a tool call an interrupted turn left open: failed,
 * with the interruption under `_meta.acpRemote.interrupted` (a client that
 * does not know it shows a failed tool call).
 */
export function interruptedToolCall(toolCallId: string, interrupted: TurnInterruption): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId, status: "failed", _meta: { [META_KEY]: { interrupted } } };
}

/** The interruption a tool call's update (or its folded first update) says ended it, if any. */
export function toolCallInterruption(update: { _meta?: { [key: string]: unknown } | null }): TurnInterruption | undefined {
  const ours = update._meta?.[META_KEY] as { interrupted?: unknown } | undefined;
  return typeof ours === "object" && ours !== null && isInterruption(ours.interrupted) ? ours.interrupted : undefined;
}
