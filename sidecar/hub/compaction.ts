// Replay compaction: a session's history as fewer updates that show the same
// (design: third wave, decision 4). Within each turn (the updates up to and
// including the mark of its end, protocol/history.ts):
//
// - a tool call's updates fold into the update that first named it, which
//   takes each field they carry (not null), the latest last;
// - a plan keeps its latest version only, where that was sent;
// - consecutive text chunks of one kind and one message merge into one, up to
//   DEFAULT_REPLAY_MERGE_CHARS;
// - the mark of a permission request asked goes once the mark that settles
//   it came (it is kept only to close off a turn the server stopped in);
// - everything else stays in place: the marks of a turn's end and of a
//   settled permission, notices, mode, config and title updates, and kinds
//   this server does not know.
//
// Why what a client draws stays the same (web/session-view): a tool call is
// one card, placed where its id first came, and an update changes only the
// fields it carries; a plan replaces the whole plan and draws nothing in the
// transcript; chunks continue the message being drawn unless something was
// drawn in between, and nothing this drops draws anything (the mark of a
// request asked draws nothing either). Nothing folds across a turn's end, so
// a turn of a replay stands on its own (the pages of a replay are turns).
//
// Compacting twice changes nothing, and a turn compacted in parts and then
// whole shows the same as one compacted whole: the journal compacts each turn
// in the store when it ends, and a replay compacts what it reads again (the
// turn still running, and journals written before compaction existed).
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { readMark } from "../../protocol/history.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import { DEFAULT_REPLAY_MERGE_CHARS } from "../limits.ts";

const TEXT_CHUNKS: ReadonlySet<string> = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);

/** Text of a chunk update whose content is text, else undefined. */
export function chunkText(update: SessionUpdate): string | undefined {
  if (!TEXT_CHUNKS.has(update.sessionUpdate)) return undefined;
  const content = (update as { content?: { type?: string; text?: unknown } }).content;
  return content?.type === "text" && typeof content.text === "string" ? content.text : undefined;
}

/** The message a chunk belongs to; null and absent alike mean none given (as the session view reads it). */
export function messageId(update: SessionUpdate): unknown {
  return (update as { messageId?: unknown }).messageId ?? undefined;
}

/** Whether `next`, a text chunk, continues `previous` in one entry: same kind, same message. */
export function continuesMessage(previous: SessionUpdate, next: SessionUpdate): boolean {
  return previous.sessionUpdate === next.sessionUpdate && messageId(previous) === messageId(next);
}

/** The history compacted, oldest first. The updates given are not changed. */
export function compactHistory(history: readonly SessionUpdate[], mergeChars = DEFAULT_REPLAY_MERGE_CHARS): SessionUpdate[] {
  const kept: Array<SessionUpdate | undefined> = [];
  /** Updates made here, which a fold may change in place. */
  const made = new WeakSet<SessionUpdate>();
  /** Per tool call of the turn, where its first update is kept. */
  let toolCalls = new Map<string, number>();
  /** Where the turn's latest plan is kept. */
  let planAt = -1;
  /** Per tool call of the turn, where the marks of its requests asked and not yet settled are kept, oldest first. */
  let asked = new Map<unknown, number[]>();
  for (const update of history) {
    switch (update.sessionUpdate) {
      case "tool_call":
      case "tool_call_update": {
        const id: unknown = update.toolCallId;
        if (typeof id !== "string") break;
        const at = toolCalls.get(id);
        if (at === undefined) {
          toolCalls.set(id, kept.length);
          break;
        }
        kept[at] = foldToolCall(kept[at]!, update, made);
        continue;
      }
      case "plan":
        // A plan the view could not draw stays, as the error it showed.
        if (!Array.isArray(update.entries)) break;
        if (planAt !== -1) kept[planAt] = undefined;
        planAt = kept.length;
        break;
      case "session_info_update": {
        const mark = readMark(update);
        if (mark === undefined) break;
        if ("turnEnd" in mark) {
          toolCalls = new Map();
          planAt = -1;
          asked = new Map();
        } else if ("permissionAsked" in mark) {
          const id = mark.permissionAsked.toolCall.toolCallId;
          asked.set(id, [...(asked.get(id) ?? []), kept.length]);
        } else {
          // It settles the first request of its tool call still open.
          const at = asked.get(mark.permission.toolCall.toolCallId)?.shift();
          if (at !== undefined) kept[at] = undefined;
        }
        break;
      }
    }
    kept.push(update);
  }
  return mergeChunks(kept, mergeChars);
}

/** `into` with each field of `update` that is set (not null), `_meta` merged key by key. */
function foldToolCall(into: SessionUpdate, update: SessionUpdate, made: WeakSet<SessionUpdate>): SessionUpdate {
  const folded = (made.has(into) ? into : { ...into }) as Record<string, unknown>;
  for (const [key, value] of Object.entries(update)) {
    if (key === "sessionUpdate" || key === "toolCallId" || value === undefined || value === null) continue;
    const before = folded[key];
    folded[key] = key === "_meta" && isRecord(before) && isRecord(value) ? { ...before, ...value } : value;
  }
  const result = folded as unknown as SessionUpdate;
  made.add(result);
  return result;
}

/** The kept updates in order, each run of text chunks of one message as one update. */
function mergeChunks(kept: ReadonlyArray<SessionUpdate | undefined>, mergeChars: number): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  /** Texts of the run that the last update of `out` starts, and their length. */
  let run: { texts: string[]; chars: number } | undefined;
  const endRun = (): void => {
    if (run !== undefined && run.texts.length > 1) {
      const first = out[out.length - 1] as SessionUpdate & { content: object };
      out[out.length - 1] = { ...first, content: { ...first.content, text: run.texts.join("") } } as SessionUpdate;
    }
    run = undefined;
  };
  for (const update of kept) {
    if (update === undefined) continue;
    const text = chunkText(update);
    if (text !== undefined && run !== undefined && run.chars + text.length <= mergeChars && continuesMessage(out[out.length - 1]!, update)) {
      run.texts.push(text);
      run.chars += text.length;
      continue;
    }
    endRun();
    out.push(update);
    if (text !== undefined) run = { texts: [text], chars: text.length };
  }
  endRun();
  return out;
}
