// What outlives a connection and a restart of the sidecar: the sessions' records
// and their journals (every `session/update` they emitted, user prompts
// included), so that `session/load` can replay the history whatever the agent
// supports (design: decision 4).
//
// Writes are batched: updates arrive in floods during a prompt turn, so they are
// collected and written in one transaction DEFAULT_JOURNAL_FLUSH_MS later (a
// replay reads after a flush, and the hub flushes on shutdown).
// Consecutive text chunks of the same kind and message are merged into one
// entry, which keeps replays short without changing what they show; an entry
// stops growing at DEFAULT_JOURNAL_MERGE_CHARS, because every flush rewrites it
// whole. The marks of a turn's end and of a settled permission
// (protocol/history.ts) are entries of their own, so no merge crosses them.
//
// A turn is compacted (./compaction.ts: a tool call's updates folded into
// one, the latest plan only, a message's chunks merged) twice over. Every
// history read is compacted, which covers the turn still running. And in the
// store, right after the write that stored a turn's end (in the same chain of
// writes), the turn's entries are replaced by their compacted form, from the
// first that changes; while a turn runs, each DEFAULT_JOURNAL_COMPACT_ENTRIES
// entries it added are compacted so (so that a long turn is not trimmed to
// the journal's bounds before it ends). Appending stays as cheap as it was
// (a chunk is merged into the last entry, anything else is a new entry); a
// turn with nothing to fold (text alone, one plan) is never read back; the
// store keeps what a replay sends, but for chunks of one message that stay
// cut at DEFAULT_JOURNAL_MERGE_CHARS, which a replay merges.
//
// What is held in memory is bounded: a session's journal is dropped from
// memory when the session leaves this node or ends, and past
// DEFAULT_MAX_JOURNALS_IN_MEMORY the idle ones go (only their last entry is
// lost to merging; the store has everything).
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import {
  DEFAULT_JOURNAL_COMPACT_ENTRIES,
  DEFAULT_JOURNAL_FLUSH_MS,
  DEFAULT_JOURNAL_MERGE_CHARS,
  DEFAULT_JOURNAL_RETRY_MS,
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_MAX_JOURNAL_ENTRIES,
  DEFAULT_MAX_JOURNALS_IN_MEMORY,
} from "../limits.ts";
import type { JournalBounds, JournalWrite, SessionRecord, SessionStore } from "../store/shared-store.ts";
import { endsTurn } from "../../protocol/history.ts";
import { chunkText, compactHistory, continuesMessage } from "./compaction.ts";
import type { Log } from "../../protocol/log-line.ts";

export type { SessionRecord } from "../store/shared-store.ts";

interface Entry {
  update: SessionUpdate;
  /**
   * Text chunks merged into `update` but not yet joined into it: a flood of
   * chunks costs an array push each, and one join and one object when the
   * entry is written, instead of a string and two objects per chunk.
   */
  texts?: string[];
  /** Characters of the entry's text, joined or not. */
  chars: number;
  dirty: boolean;
  /** In the store already (only the tail changes after that, by merging). */
  written: boolean;
}

interface SessionJournal {
  /** Entries not yet written, and the last entry (which may still grow by merging). */
  pending: Entry[];
  tail?: Entry;
  /** The session left this node: the journal leaves memory once what is pending is written. */
  released?: boolean;
  /**
   * The turn going on, as far as this journal stored it: a journal that
   * comes into memory in the middle of a turn (after a restart, or evicted
   * and back) counts from there, and compacts that part of the turn.
   */
  turn: TurnInStore;
}

/** Entries stored, and of them those a compaction drops. */
interface Tally {
  entries: number;
  /** Each folds into the first update of its tool call. */
  toolUpdates: number;
  /** All but the turn's last go. */
  plans: number;
}

/** The turn going on in the store: its entries are the newest `entries` there. */
interface TurnInStore extends Tally {
  /** Entries stored since the turn was last compacted in the store (while it runs)... */
  uncompacted: number;
  /** ...and of them, tool call updates and plans. */
  uncompactedFolds: number;
}

/** What one flush stored of one session's journal. */
interface BatchWrite {
  sessionId: string;
  journal: SessionJournal;
  entries: Entry[];
  wasWritten: boolean[];
  /** New entries up to the last turn's end among them (undefined when none ended a turn)... */
  ended: Tally | undefined;
  /** ...and the new entries after it (all of them when none ended a turn). */
  rest: Tally;
}

/** A turn (or several) whose entries in the store are replaced by their compacted form. */
interface TurnCompaction {
  sessionId: string;
  journal: SessionJournal;
  /** The entries compacted, the newest of the store (the turn's, or what a turn going on added since it was last compacted)... */
  turn: number;
  /** ...but for these, stored after them, which stay as they are: the next turn's, or the newest entry of a turn that goes on when it may still grow by merging. */
  after: number;
  /** The turn goes on: its count of entries follows what the compaction left. */
  running: boolean;
}

function noEntries(): Tally {
  return { entries: 0, toolUpdates: 0, plans: 0 };
}

function count(tally: Tally, update: SessionUpdate): void {
  tally.entries++;
  if (update.sessionUpdate === "tool_call_update") tally.toolUpdates++;
  else if (update.sessionUpdate === "plan") tally.plans++;
}

function added(a: Tally, b: Tally): Tally {
  return { entries: a.entries + b.entries, toolUpdates: a.toolUpdates + b.toolUpdates, plans: a.plans + b.plans };
}

/**
 * Whether compacting pays: something folds or goes. A turn of text alone is
 * left as the merging of its chunks wrote it (a flood of text is not read
 * back and written again for nothing).
 */
function foldable(tally: Tally): boolean {
  return tally.toolUpdates > 0 || tally.plans > 1;
}

/** The entry's update with every text merged into it joined in. */
function settled(entry: Entry): SessionUpdate {
  const texts = entry.texts;
  if (texts !== undefined) {
    entry.texts = undefined;
    const content = (entry.update as { content: object }).content;
    entry.update = { ...entry.update, content: { ...content, text: texts.join("") } } as SessionUpdate;
  }
  return entry.update;
}

export class Journal {
  readonly #store: SessionStore;
  readonly #bounds: JournalBounds;
  readonly #mergeChars: number;
  readonly #compactEntries: number;
  readonly #flushMs: number;
  readonly #maxInMemory: number;
  readonly #log: Log;
  readonly #journals = new Map<string, SessionJournal>();
  #flushScheduled = false;
  #closed = false;
  /** The last write failed (the store is unreachable): the next success is logged. */
  #failing = false;
  /** The flush being written: flushes run one after another, so a rewrite of the last entry never overtakes its insert. */
  #writing: Promise<void> = Promise.resolve();
  /** Per session, the lists collecting what is appended while its history is read through (entriesThrough). */
  readonly #collecting = new Map<string, Set<SessionUpdate[]>>();

  constructor(
    store: SessionStore,
    options: {
      maxEntries?: number;
      maxBytes?: number;
      mergeChars?: number;
      compactEntries?: number;
      flushMs?: number;
      maxInMemory?: number;
      log?: Log;
    } = {},
  ) {
    this.#store = store;
    this.#bounds = { maxEntries: options.maxEntries ?? DEFAULT_MAX_JOURNAL_ENTRIES, maxBytes: options.maxBytes ?? DEFAULT_MAX_JOURNAL_BYTES };
    this.#mergeChars = options.mergeChars ?? DEFAULT_JOURNAL_MERGE_CHARS;
    this.#compactEntries = options.compactEntries ?? DEFAULT_JOURNAL_COMPACT_ENTRIES;
    this.#flushMs = options.flushMs ?? DEFAULT_JOURNAL_FLUSH_MS;
    this.#maxInMemory = options.maxInMemory ?? DEFAULT_MAX_JOURNALS_IN_MEMORY;
    this.#log = options.log ?? (() => undefined);
  }

  /** False when the id holds another person's session: that record stays as it is. */
  saveSession(record: SessionRecord): Promise<boolean> {
    return this.#store.save(record);
  }

  /** Every session the store knows. */
  loadSessions(): Promise<SessionRecord[]> {
    return this.#store.all();
  }

  /** Ends a session for good: its record and journal are gone, from the store and from memory. */
  deleteSession(sessionId: string): Promise<void> {
    this.#journals.delete(sessionId);
    // After the write in flight, which could otherwise bring rows of the session back.
    return this.#writing.then(() => this.#store.delete(sessionId));
  }

  /**
   * The session left this node (another node takes it over): what is pending
   * is written, and its journal leaves memory then. The store keeps it all.
   */
  release(sessionId: string): Promise<void> {
    const journal = this.#journals.get(sessionId);
    if (journal === undefined) return this.#writing;
    journal.released = true;
    if (journal.pending.length === 0) {
      this.#journals.delete(sessionId);
      return this.#writing;
    }
    return this.flush().catch(() => undefined);
  }

  /** Sessions whose journal is held in memory now (written or not). */
  get sessionsInMemory(): number {
    return this.#journals.size;
  }

  append(sessionId: string, update: SessionUpdate): void {
    if (this.#closed) return;
    if (this.#collecting.size > 0) this.#collecting.get(sessionId)?.forEach((list) => list.push(update));
    let journal = this.#journals.get(sessionId);
    if (!journal) {
      this.#evictIdle();
      journal = { pending: [], turn: { ...noEntries(), uncompacted: 0, uncompactedFolds: 0 } };
      this.#journals.set(sessionId, journal);
    }
    journal.released = false;
    const tail = journal.tail;
    const text = chunkText(update);
    if (tail && text !== undefined && continuesMessage(tail.update, update)) {
      const tailText = chunkText(tail.update);
      if (tailText !== undefined && tail.chars + text.length <= this.#mergeChars) {
        if (tail.texts === undefined) tail.texts = [tailText, text];
        else tail.texts.push(text);
        tail.chars += text.length;
        if (!tail.dirty) {
          tail.dirty = true;
          journal.pending.push(tail);
        }
        this.#scheduleFlush();
        return;
      }
    }
    const entry: Entry = { update, chars: text?.length ?? 0, dirty: true, written: false };
    journal.tail = entry;
    journal.pending.push(entry);
    this.#scheduleFlush();
  }

  /**
   * The session's history as it stands at this call, oldest first, compacted:
   * what is appended later is not in it, even while the store is being read
   * (writes wait for the read). A client that follows the session before
   * this call gets everything after it live, so it sees each update once.
   */
  entries(sessionId: string): Promise<SessionUpdate[]> {
    const read = this.flush().then(() => this.#store.journal(sessionId));
    this.#writing = this.#writing.then(() => read.then(noop, noop));
    return read.then((entries) => compactHistory(entries.map((entry) => JSON.parse(entry) as SessionUpdate)));
  }

  /**
   * The newest `count` entries of the session's history (all when fewer are
   * stored) as the store has them, oldest first: what is pending is written
   * first, and writes wait for the read, as for entries().
   */
  tail(sessionId: string, count: number): Promise<SessionUpdate[]> {
    const read = this.flush().then(() => this.#store.journalTail(sessionId, count));
    this.#writing = this.#writing.then(() => read.then(noop, noop));
    return read.then((entries) => entries.map((entry) => JSON.parse(entry) as SessionUpdate));
  }

  /**
   * The session's history up to when the promise settles: the journal as it
   * stood at this call, then what was appended while the store was read. For
   * a reader told of every update as it is appended, which drops them until
   * it has this answer (the editor's session tab): each update is in the
   * answer or told after it.
   */
  async entriesThrough(sessionId: string): Promise<SessionUpdate[]> {
    const appended: SessionUpdate[] = [];
    let lists = this.#collecting.get(sessionId);
    if (lists === undefined) {
      lists = new Set();
      this.#collecting.set(sessionId, lists);
    }
    lists.add(appended);
    try {
      const history = await this.entries(sessionId);
      return [...history, ...appended];
    } finally {
      lists.delete(appended);
      if (lists.size === 0 && this.#collecting.get(sessionId) === lists) this.#collecting.delete(sessionId);
    }
  }

  /**
   * Writes what is pending now, in one batch, each journal trimmed to its
   * bounds, then compacts in the store the turns whose end it wrote. A batch
   * the store refused goes back to pending and is tried again.
   */
  flush(): Promise<void> {
    const batch: BatchWrite[] = [];
    const writes: JournalWrite[] = [];
    for (const [sessionId, journal] of this.#journals) {
      if (journal.pending.length === 0) continue;
      const write: JournalWrite = { sessionId, append: [] };
      const entries: Entry[] = [];
      const wasWritten: boolean[] = [];
      let ended: Tally | undefined;
      let rest = noEntries();
      for (const entry of journal.pending) {
        const json = this.#serialize(sessionId, journal, entry);
        if (json === undefined) continue;
        if (entry.written) write.replaceLast = json;
        else {
          write.append.push(json);
          count(rest, entry.update);
          if (endsTurn(entry.update)) {
            ended = ended === undefined ? rest : added(ended, rest);
            rest = noEntries();
          }
        }
        entries.push(entry);
        wasWritten.push(entry.written);
        entry.dirty = false;
        entry.written = true;
      }
      journal.pending = [];
      if (entries.length === 0) continue;
      batch.push({ sessionId, journal, entries, wasWritten, ended, rest });
      writes.push(write);
    }
    if (writes.length === 0) return this.#writing;
    const written = this.#writing.then(() => this.#store.writeJournal(writes, this.#bounds));
    const done = written.then(
      async () => {
        if (this.#failing) this.#log("journal: writes go through again");
        this.#failing = false;
        const turns: TurnCompaction[] = [];
        for (const { sessionId, journal, ended, rest } of batch) {
          if (ended !== undefined) {
            const turn = added(journal.turn, ended);
            if (foldable(turn)) turns.push({ sessionId, journal, turn: turn.entries, after: rest.entries, running: false });
            journal.turn = { ...rest, uncompacted: rest.entries, uncompactedFolds: rest.toolUpdates + rest.plans };
            continue;
          }
          const turn = journal.turn;
          journal.turn = { ...added(turn, rest), uncompacted: turn.uncompacted + rest.entries, uncompactedFolds: turn.uncompactedFolds + rest.toolUpdates + rest.plans };
          if (journal.turn.uncompacted >= this.#compactEntries && journal.turn.uncompactedFolds > 0) {
            // The newest entry stays out while chunks may still merge into it (it is the tail, written).
            const growing = journal.tail?.written === true && chunkText(journal.tail.update) !== undefined ? 1 : 0;
            turns.push({ sessionId, journal, turn: journal.turn.uncompacted - growing, after: growing, running: true });
            // A tool call cut by the window's edge, or a plan of an earlier window, waits for the turn's end.
            journal.turn.uncompacted = growing;
            journal.turn.uncompactedFolds = 0;
          }
        }
        if (turns.length > 0) await this.#compactTurns(turns);
        for (const { sessionId, journal } of batch) {
          if (journal.released && journal.pending.length === 0 && this.#journals.get(sessionId) === journal) this.#journals.delete(sessionId);
        }
      },
      (error: unknown) => {
        // Logged once per outage, not once per try.
        if (!this.#failing) this.#log(`journal: a write failed, tried again every ${DEFAULT_JOURNAL_RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`, "warn");
        this.#failing = true;
        for (const { journal, entries, wasWritten } of batch) this.#putBack(journal, entries, wasWritten);
        this.#scheduleFlush(DEFAULT_JOURNAL_RETRY_MS);
      },
    );
    this.#writing = done;
    return written.then(() => done);
  }

  /**
   * Replaces turns' entries in the store by their compacted form, from the
   * first that changes, in one write. It runs in the chain of writes, so
   * nothing is written to those journals between the read and the rewrite;
   * the entries after a turn's are written back as they were (the last of
   * them may still grow by merging). Chunks merge up to the journal's own
   * bound, so that runs it cut there are left as they are. When the store
   * fails here the turn stays as it was: a replay compacts it anyway.
   */
  async #compactTurns(turns: TurnCompaction[]): Promise<void> {
    try {
      const writes: JournalWrite[] = [];
      for (const { sessionId, journal, turn, after, running } of turns) {
        if (this.#journals.get(sessionId) !== journal) continue;
        const tail = await this.#store.journalTail(sessionId, turn + after);
        // The store may hold fewer: trimmed to its bounds.
        const ended = tail.length - after;
        if (ended <= 1) continue;
        const stored = tail.slice(0, ended).map((entry) => JSON.parse(entry) as SessionUpdate);
        const compacted = compactHistory(stored, this.#mergeChars);
        if (running) journal.turn.entries -= ended - compacted.length;
        if (compacted.length === ended) continue;
        // What compaction left as it was is the same object: written again from the first that is not.
        let same = 0;
        while (compacted[same] === stored[same]) same++;
        writes.push({ sessionId, dropLast: tail.length - same, append: [...compacted.slice(same).map((update) => JSON.stringify(update)), ...tail.slice(ended)] });
      }
      if (writes.length > 0) await this.#store.writeJournal(writes, this.#bounds);
    } catch (error) {
      this.#log(`journal: a turn could not be compacted in the store (a replay compacts it): ${error instanceof Error ? error.message : String(error)}`, "warn");
    }
  }

  /**
   * The entry as JSON, or undefined when it cannot be serialized: it is logged
   * and dropped, and the rest of the journal is written. Inbound messages are
   * bounded in depth where they come in (common/json-depth.ts), so this is the
   * last line: a flush runs in a timer, where a throw would end the process.
   */
  #serialize(sessionId: string, journal: SessionJournal, entry: Entry): string | undefined {
    try {
      return JSON.stringify(settled(entry));
    } catch (error) {
      this.#log(`journal: an update of session ${sessionId} was dropped, it cannot be serialized: ${error instanceof Error ? error.message : String(error)}`, "warn");
      entry.dirty = false;
      // Nothing merges into it any more.
      if (journal.tail === entry) journal.tail = undefined;
      return undefined;
    }
  }

  /** Entries of a failed write are pending again, before anything appended since, and as unwritten as before. */
  #putBack(journal: SessionJournal, entries: Entry[], wasWritten: boolean[]): void {
    entries.forEach((entry, i) => {
      entry.dirty = true;
      entry.written = wasWritten[i] ?? false;
    });
    // The tail may be pending again already, merged into since: it keeps its place.
    journal.pending = [...entries.filter((e) => !journal.pending.includes(e)), ...journal.pending];
  }

  /**
   * Writes what is pending, once more, and schedules nothing after: the
   * store is about to close. What comes later is not journaled.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  /** Makes room for one more journal: the oldest ones with nothing pending leave memory. */
  #evictIdle(): void {
    if (this.#journals.size < this.#maxInMemory) return;
    for (const [sessionId, journal] of this.#journals) {
      if (journal.pending.length === 0) this.#journals.delete(sessionId);
      if (this.#journals.size < this.#maxInMemory) return;
    }
  }

  #scheduleFlush(delayMs = this.#flushMs): void {
    if (this.#flushScheduled || this.#closed) return;
    this.#flushScheduled = true;
    setTimeout(() => {
      this.#flushScheduled = false;
      // A failed write is put back and tried again (flush); nothing may throw out of a timer.
      try {
        this.flush().catch(() => undefined);
      } catch (error) {
        this.#log(`journal: a flush failed: ${error instanceof Error ? error.message : String(error)}`, "error");
      }
    }, delayMs);
  }
}

function noop(): void {}
