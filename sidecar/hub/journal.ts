// What outlives a connection and a restart of the sidecar: the sessions' records
// and their journals (every `session/update` they emitted, user prompts
// included), so that `session/load` can replay the history whatever the agent
// supports (design: decision 4).
//
// Writes are batched: updates arrive in floods during a prompt turn, so they are
// collected and written in one transaction DEFAULT_JOURNAL_FLUSH_MS later (a
// replay reads after a flush, and the hub flushes on shutdown).
// Consecutive text chunks of the same kind are merged into one entry, which
// keeps replays short without changing what they show; an entry stops growing
// at DEFAULT_JOURNAL_MERGE_CHARS, because every flush rewrites it whole.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import {
  DEFAULT_JOURNAL_FLUSH_MS,
  DEFAULT_JOURNAL_MERGE_CHARS,
  DEFAULT_JOURNAL_RETRY_MS,
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_MAX_JOURNAL_ENTRIES,
} from "../limits.ts";
import type { JournalBounds, JournalWrite, SessionRecord, SessionStore } from "../store/shared-store.ts";

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
}

const MERGEABLE = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);

/** Text of a chunk update whose content is text, else undefined. */
function chunkText(update: SessionUpdate): string | undefined {
  if (!MERGEABLE.has(update.sessionUpdate)) return undefined;
  const content = (update as { content?: { type?: string; text?: unknown } }).content;
  return content?.type === "text" && typeof content.text === "string" ? content.text : undefined;
}

function messageId(update: SessionUpdate): unknown {
  return (update as { messageId?: unknown }).messageId;
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
  readonly #flushMs: number;
  readonly #log: (line: string) => void;
  readonly #journals = new Map<string, SessionJournal>();
  #flushScheduled = false;
  #closed = false;
  /** The last write failed (the store is unreachable): the next success is logged. */
  #failing = false;
  /** The flush being written: flushes run one after another, so a rewrite of the last entry never overtakes its insert. */
  #writing: Promise<void> = Promise.resolve();

  constructor(
    store: SessionStore,
    options: { maxEntries?: number; maxBytes?: number; mergeChars?: number; flushMs?: number; log?: (line: string) => void } = {},
  ) {
    this.#store = store;
    this.#bounds = { maxEntries: options.maxEntries ?? DEFAULT_MAX_JOURNAL_ENTRIES, maxBytes: options.maxBytes ?? DEFAULT_MAX_JOURNAL_BYTES };
    this.#mergeChars = options.mergeChars ?? DEFAULT_JOURNAL_MERGE_CHARS;
    this.#flushMs = options.flushMs ?? DEFAULT_JOURNAL_FLUSH_MS;
    this.#log = options.log ?? (() => undefined);
  }

  saveSession(record: SessionRecord): Promise<void> {
    return this.#store.save(record);
  }

  /** Every session the store knows. */
  loadSessions(): Promise<SessionRecord[]> {
    return this.#store.all();
  }

  /** Ends a session for good: its record and journal are gone. */
  deleteSession(sessionId: string): Promise<void> {
    this.#journals.delete(sessionId);
    // After the write in flight, which could otherwise bring rows of the session back.
    return this.#writing.then(() => this.#store.delete(sessionId));
  }

  append(sessionId: string, update: SessionUpdate): void {
    if (this.#closed) return;
    let journal = this.#journals.get(sessionId);
    if (!journal) {
      journal = { pending: [] };
      this.#journals.set(sessionId, journal);
    }
    const tail = journal.tail;
    const text = chunkText(update);
    if (tail && text !== undefined && tail.update.sessionUpdate === update.sessionUpdate && messageId(tail.update) === messageId(update)) {
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

  /** The session's history, oldest first. */
  async entries(sessionId: string): Promise<SessionUpdate[]> {
    await this.flush();
    return (await this.#store.journal(sessionId)).map((entry) => JSON.parse(entry) as SessionUpdate);
  }

  /**
   * Writes what is pending now, in one batch, each journal trimmed to its
   * bounds. A batch the store refused goes back to pending and is tried again.
   */
  flush(): Promise<void> {
    const batch: Array<{ journal: SessionJournal; entries: Entry[]; wasWritten: boolean[] }> = [];
    const writes: JournalWrite[] = [];
    for (const [sessionId, journal] of this.#journals) {
      if (journal.pending.length === 0) continue;
      const write: JournalWrite = { sessionId, append: [] };
      const wasWritten = journal.pending.map((e) => e.written);
      for (const entry of journal.pending) {
        if (entry.written) write.replaceLast = JSON.stringify(settled(entry));
        else write.append.push(JSON.stringify(settled(entry)));
        entry.dirty = false;
        entry.written = true;
      }
      batch.push({ journal, entries: journal.pending, wasWritten });
      journal.pending = [];
      writes.push(write);
    }
    if (writes.length === 0) return this.#writing;
    const written = this.#writing.then(() => this.#store.writeJournal(writes, this.#bounds));
    this.#writing = written.then(
      () => {
        if (this.#failing) this.#log("journal: writes go through again");
        this.#failing = false;
      },
      (error: unknown) => {
        // Logged once per outage, not once per try.
        if (!this.#failing) this.#log(`journal: a write failed, tried again every ${DEFAULT_JOURNAL_RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
        this.#failing = true;
        for (const { journal, entries, wasWritten } of batch) this.#putBack(journal, entries, wasWritten);
        this.#scheduleFlush(DEFAULT_JOURNAL_RETRY_MS);
      },
    );
    return written;
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

  #scheduleFlush(delayMs = this.#flushMs): void {
    if (this.#flushScheduled || this.#closed) return;
    this.#flushScheduled = true;
    setTimeout(() => {
      this.#flushScheduled = false;
      this.flush().catch(() => undefined);
    }, delayMs);
  }
}
