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

/** A prompt turn ended: with the agent's stop reason, or with an error (the prompt's error message). */
export type TurnEndMark = { stopReason: StopReason } | { error: string };

/** Who settled a permission request: a client, the editor or a notification answered, or it was withdrawn (the agent gave up, the wait timed out, the turn was cancelled). */
export type PermissionSettledBy = "client" | "editor" | "notification" | "agent" | "timeout" | "cancel";

/** A permission request as it was asked, and how it was settled. */
export interface PermissionMark {
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
  outcome: RequestPermissionOutcome;
  settledBy: PermissionSettledBy;
}

export type HistoryMark = { turnEnd: TurnEndMark } | { permission: PermissionMark };

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
  const mark = ours as Partial<{ turnEnd: unknown; permission: unknown }>;
  const turnEnd = mark.turnEnd as Partial<{ stopReason: unknown; error: unknown }> | undefined;
  if (typeof turnEnd === "object" && turnEnd !== null) {
    if (typeof turnEnd.stopReason === "string") return { turnEnd: { stopReason: turnEnd.stopReason as StopReason } };
    if (typeof turnEnd.error === "string") return { turnEnd: { error: turnEnd.error } };
    return undefined;
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
