// Pages of a session's history, for a client that shows the latest turns
// first and earlier ones as the person scrolls up (docs/transport.md, "Pages
// of a replay"). A turn is the updates up to and including the mark of its
// end (protocol/history.ts); the last one may still run. Turns are counted
// from the oldest the journal holds, so a count stays valid while new turns
// come.
//
// A page begins with the mark of the end of the turn before its first (it
// ends that turn in a view: a plan the turn left unfinished shows stopped),
// and leaves out the end of its last turn, which the page after it brings;
// the latest page has the history to its end. Pages put together are the
// history, each update once.
//
// The first page also brings, before all that, what the skipped turns left
// in place and the view shows outside the transcript (the plan, the
// commands, the mode, the config options, the title and the first title, the
// usage), so that the page draws the session's state as the whole history
// would.
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
function turnsOf(history: readonly SessionUpdate[]): SessionUpdate[][] {
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
  return { updates: [...stateOf(turns.slice(0, earlier).flat()), ...page(turns, earlier, turns.length)], earlier };
}

/** The `count` turns before turn `before` (0 is the oldest). */
export function earlierTurns(history: readonly SessionUpdate[], before: number, count: number): HistoryPage {
  const turns = turnsOf(history);
  const end = Math.min(before, turns.length);
  const earlier = Math.max(0, end - count);
  return { updates: page(turns, earlier, end), earlier };
}

/** Turns `from` to `to` (not included) as a page: the end of the turn before first, the end of the last left to the page after. */
function page(turns: readonly SessionUpdate[][], from: number, to: number): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  const before = turns[from - 1]?.at(-1);
  if (before !== undefined && endsTurn(before)) out.push(before);
  for (let at = from; at < to; at++) {
    const turn = turns[at]!;
    const end = turn.at(-1);
    out.push(...(at === to - 1 && to < turns.length && end !== undefined && endsTurn(end) ? turn.slice(0, -1) : turn));
  }
  return out;
}

/** The state `updates` leave, as the fewest updates that set it, in the order they came. */
function stateOf(updates: readonly SessionUpdate[]): SessionUpdate[] {
  const latest = new Map<string, { at: number; update: SessionUpdate }>();
  /** The session's first title: a title cleared since (null) gives way to it in the session view. */
  let firstTitle: { at: number; update: SessionUpdate } | undefined;
  updates.forEach((update, at) => {
    if (STATE_KINDS.has(update.sessionUpdate)) {
      latest.set(update.sessionUpdate, { at, update });
    } else if (update.sessionUpdate === "session_info_update" && readMark(update) === undefined) {
      if (firstTitle === undefined && typeof update.title === "string" && update.title !== "") firstTitle = { at, update: { sessionUpdate: "session_info_update", title: update.title } };
      // Each carries only what changed: they add up.
      const before = latest.get(update.sessionUpdate)?.update;
      latest.set(update.sessionUpdate, { at, update: before === undefined ? update : withSetFields(before, update) });
    }
  });
  const info = latest.get("session_info_update")?.update as { title?: unknown } | undefined;
  const carried = [...latest.values()];
  if (firstTitle !== undefined && info?.title !== (firstTitle.update as { title: string }).title) carried.push(firstTitle);
  return carried.sort((a, b) => a.at - b.at).map((entry) => entry.update);
}

function withSetFields(into: SessionUpdate, update: SessionUpdate): SessionUpdate {
  const out = { ...into } as Record<string, unknown>;
  for (const [key, value] of Object.entries(update)) if (value !== undefined) out[key] = value;
  return out as unknown as SessionUpdate;
}
