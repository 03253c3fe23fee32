// Pages of a session's history, for a client that shows the latest turns
// first and earlier ones as the person scrolls up (docs/transport.md, "Pages
// of a replay"). A turn is the updates up to and including the mark of its
// end (protocol/history.ts); the last one may still run. Turns are counted
// from the oldest the journal holds, so a count stays valid while new turns
// come.
//
// The first page also brings what the skipped turns left in place and the
// view shows outside the transcript (the plan, the commands, the mode, the
// config options, the title, the usage), so that the page draws the session's
// state as the whole history would. Pages of earlier turns are the turns alone.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { endsTurn, readMark } from "../../protocol/history.ts";

export interface HistoryPage {
  updates: SessionUpdate[];
  /** Turns before the page's: the `before` of the page that comes before it; 0 when none. */
  earlier: number;
}

/** Updates that set a state the next ones replace whole: the latest of each kind is the state. */
const STATE_KINDS: ReadonlySet<string> = new Set(["plan", "available_commands_update", "current_mode_update", "config_option_update", "usage_update"]);

/** The history cut into turns, oldest first. */
export function turnsOf(history: readonly SessionUpdate[]): SessionUpdate[][] {
  const turns: SessionUpdate[][] = [];
  let turn: SessionUpdate[] = [];
  for (const update of history) {
    turn.push(update);
    if (endsTurn(update)) {
      turns.push(turn);
      turn = [];
    }
  }
  if (turn.length > 0) turns.push(turn);
  return turns;
}

/** The latest `count` turns, after the state the turns before them left. */
export function latestTurns(history: readonly SessionUpdate[], count: number): HistoryPage {
  const turns = turnsOf(history);
  const earlier = Math.max(0, turns.length - count);
  return { updates: [...stateOf(turns.slice(0, earlier).flat()), ...turns.slice(earlier).flat()], earlier };
}

/** The `count` turns before turn `before` (0 is the oldest). */
export function earlierTurns(history: readonly SessionUpdate[], before: number, count: number): HistoryPage {
  const turns = turnsOf(history);
  const end = Math.min(before, turns.length);
  const earlier = Math.max(0, end - count);
  return { updates: turns.slice(earlier, end).flat(), earlier };
}

/** The state `updates` leave, as the fewest updates that set it, in the order they came. */
function stateOf(updates: readonly SessionUpdate[]): SessionUpdate[] {
  const latest = new Map<string, { at: number; update: SessionUpdate }>();
  updates.forEach((update, at) => {
    if (STATE_KINDS.has(update.sessionUpdate)) {
      latest.set(update.sessionUpdate, { at, update });
    } else if (update.sessionUpdate === "session_info_update" && readMark(update) === undefined) {
      // Each carries only what changed: they add up.
      const before = latest.get(update.sessionUpdate)?.update;
      latest.set(update.sessionUpdate, { at, update: before === undefined ? update : withSetFields(before, update) });
    }
  });
  return [...latest.values()].sort((a, b) => a.at - b.at).map((entry) => entry.update);
}

function withSetFields(into: SessionUpdate, update: SessionUpdate): SessionUpdate {
  const out = { ...into } as Record<string, unknown>;
  for (const [key, value] of Object.entries(update)) if (value !== undefined) out[key] = value;
  return out as unknown as SessionUpdate;
}
