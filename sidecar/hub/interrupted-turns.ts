// A turn that ends without its agent's answer (protocol/history.ts): what it
// left open, and how it is closed off. While a turn runs, the hub notes its
// updates here (OpenTurn); when its agent process dies, the turn's open tool
// calls get their failed update, told live and journaled, before the mark of
// its end. When the server itself dies, nothing can be written then: a
// session that comes back (the next start, or a take-over by another node)
// has its journal read first, and a turn it shows started (its prompt) and
// not ended is closed off there with the same updates, its permission
// requests still open withdrawn, before any client reads it.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import {
  endsTurn,
  INTERRUPTION_WORDS,
  interruptedToolCall,
  markUpdate,
  readMark,
  type PermissionAskedMark,
  type PermissionMark,
  type TurnInterruption,
} from "../../protocol/history.ts";
import { DEFAULT_OPEN_TURN_SCAN_ENTRIES } from "../limits.ts";
import type { Journal } from "./journal.ts";

/** Statuses after which a tool call is over. */
const OVER: ReadonlySet<unknown> = new Set(["completed", "failed"]);

/** What a turn left open: its tool calls not over, and its permission requests not settled (as the journal has them). */
export class OpenTurn {
  /** Tool call ids, in the order they came, and whether each is still open. */
  readonly #toolCalls = new Map<string, boolean>();
  /** The requests asked and not settled, in the order they were asked. */
  #asked: PermissionAskedMark[] = [];

  /** A turn begins: nothing of the one before is its. */
  reset(): void {
    this.#toolCalls.clear();
    this.#asked = [];
  }

  /** One update of the turn, in order. */
  note(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case "tool_call":
        // A tool call's status is `pending` until told otherwise.
        this.#toolCalls.set(update.toolCallId, !OVER.has(update.status));
        break;
      case "tool_call_update":
        // An update without a status changes what the call shows, not whether it is over.
        if (update.status != null) this.#toolCalls.set(update.toolCallId, !OVER.has(update.status));
        break;
      case "session_info_update": {
        const mark = readMark(update);
        if (mark === undefined) break;
        if ("permissionAsked" in mark) this.#asked.push(mark.permissionAsked);
        else if ("permission" in mark) {
          // It settles the first request asked for its tool call that is still open.
          const at = this.#asked.findIndex((asked) => asked.toolCall.toolCallId === mark.permission.toolCall.toolCallId);
          if (at !== -1) this.#asked.splice(at, 1);
        }
        break;
      }
    }
  }

  /** Ids of the tool calls still open, oldest first. */
  openToolCalls(): string[] {
    return [...this.#toolCalls].filter(([, open]) => open).map(([id]) => id);
  }

  /** The permission requests journaled as asked and not settled, withdrawn. */
  withdrawnPermissions(): PermissionMark[] {
    return this.#asked.map((asked) => ({
      toolCall: asked.toolCall,
      options: asked.options,
      outcome: { outcome: "cancelled" },
      settledBy: "interrupted",
    }));
  }
}

/** The error an interrupted turn's prompt answers: the words a person reads, and what the server knows of the cause. */
export function interruptionMessage(interrupted: TurnInterruption, detail?: string): string {
  const words = INTERRUPTION_WORDS[interrupted];
  return detail === undefined || detail === "" ? words : `${words} (${detail})`;
}

/**
 * The updates that close off an interrupted turn, in the order the journal
 * takes them: its open permission requests withdrawn, its open tool calls
 * failed, the mark of its end.
 */
function closingUpdates(turn: OpenTurn, interrupted: TurnInterruption, message = interruptionMessage(interrupted)): SessionUpdate[] {
  return [
    ...turn.withdrawnPermissions().map((permission) => markUpdate({ permission })),
    ...turn.openToolCalls().map((id) => interruptedToolCall(id, interrupted)),
    markUpdate({ turnEnd: { error: message, interrupted } }),
  ];
}

/**
 * The turn `history` leaves open, if any: the updates after the last turn's
 * end hold a prompt (its `user_message_chunk`s are what the hub journals first
 * of every turn). `complete` is false when `history` holds no turn's end and
 * may not reach back to where the turn began: then the whole journal is needed.
 */
function openTurnOf(history: readonly SessionUpdate[], whole: boolean): { turn: OpenTurn | undefined; complete: boolean } {
  const turn = new OpenTurn();
  let open = false;
  let ended = false;
  for (const update of history) {
    if (endsTurn(update)) {
      open = false;
      ended = true;
      continue;
    }
    if (update.sessionUpdate === "user_message_chunk" && !open) {
      turn.reset();
      open = true;
    }
    turn.note(update);
  }
  return { turn: open ? turn : undefined, complete: whole || ended };
}

/**
 * Closes off, in the journal, the turn it shows started and not ended: the
 * server stopped while it ran, here or on the node that ran it before. True
 * when there was one. Runs before any client can read the session's history.
 */
export async function closeInterruptedTurn(journal: Journal, sessionId: string, scanEntries = DEFAULT_OPEN_TURN_SCAN_ENTRIES): Promise<boolean> {
  const tail = await journal.tail(sessionId, scanEntries);
  let found = openTurnOf(tail, tail.length < scanEntries);
  if (!found.complete) found = openTurnOf(await journal.entries(sessionId), true);
  if (found.turn === undefined) return false;
  for (const update of closingUpdates(found.turn, "server-stopped")) journal.append(sessionId, update);
  return true;
}
