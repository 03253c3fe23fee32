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
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_MAX_JOURNAL_ENTRIES,
} from "../limits.ts";
import { type Database, transaction } from "../store/store.ts";

export interface SessionRecord {
  id: string;
  agent: string;
  cwd: string;
  /** Folders the session may touch: cwd and its additional directories. */
  roots: string[];
  /** `mcpServers` of session/new, given again when the agent session is re-created. */
  mcpServers: unknown[];
  ownerId: string;
  ownerLabel: string;
  createdAt: number;
  updatedAt: number;
  title?: string;
  /** The session's id inside the agent, last known; tried with the agent's session/load after a restart. */
  agentSessionId?: string;
}

interface Entry {
  rowid?: number;
  update: SessionUpdate;
  dirty: boolean;
  /** Bytes of the entry as last written. */
  written: number;
}

interface SessionJournal {
  /** Entries not yet written, and the last entry (which may still grow by merging). */
  pending: Entry[];
  tail?: Entry;
  /** Rows and bytes in the store; -1 until read from it. */
  count: number;
  bytes: number;
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

export class Journal {
  readonly #db: Database;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #mergeChars: number;
  readonly #flushMs: number;
  readonly #journals = new Map<string, SessionJournal>();
  #flushScheduled = false;

  constructor(db: Database, options: { maxEntries?: number; maxBytes?: number; mergeChars?: number; flushMs?: number } = {}) {
    this.#db = db;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_JOURNAL_ENTRIES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_JOURNAL_BYTES;
    this.#mergeChars = options.mergeChars ?? DEFAULT_JOURNAL_MERGE_CHARS;
    this.#flushMs = options.flushMs ?? DEFAULT_JOURNAL_FLUSH_MS;
    db.exec(`
      CREATE TABLE IF NOT EXISTS hub_sessions (
        id TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS hub_journal (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        entry TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS hub_journal_session ON hub_journal (session_id, seq);
    `);
  }

  saveSession(record: SessionRecord): void {
    this.#db
      .prepare("INSERT INTO hub_sessions (id, record, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at")
      .run(record.id, JSON.stringify(record), record.updatedAt);
  }

  /** Every session the store knows (they come back detached after a restart). */
  loadSessions(): SessionRecord[] {
    const rows = this.#db.prepare("SELECT record FROM hub_sessions").all() as Array<{ record: string }>;
    return rows.map((row) => JSON.parse(row.record) as SessionRecord);
  }

  /** Ends a session for good: its record and journal are gone. */
  deleteSession(sessionId: string): void {
    this.#journals.delete(sessionId);
    transaction(this.#db, () => {
      this.#db.prepare("DELETE FROM hub_journal WHERE session_id = ?").run(sessionId);
      this.#db.prepare("DELETE FROM hub_sessions WHERE id = ?").run(sessionId);
    });
  }

  append(sessionId: string, update: SessionUpdate): void {
    let journal = this.#journals.get(sessionId);
    if (!journal) {
      journal = { pending: [], count: -1, bytes: 0 };
      this.#journals.set(sessionId, journal);
    }
    const tail = journal.tail;
    const text = chunkText(update);
    if (tail && text !== undefined && tail.update.sessionUpdate === update.sessionUpdate && messageId(tail.update) === messageId(update)) {
      const tailText = chunkText(tail.update);
      if (tailText !== undefined && tailText.length + text.length <= this.#mergeChars) {
        const merged = { ...tail.update, content: { ...(tail.update as { content: object }).content, text: tailText + text } };
        tail.update = merged as SessionUpdate;
        if (!tail.dirty) {
          tail.dirty = true;
          journal.pending.push(tail);
        }
        this.#scheduleFlush();
        return;
      }
    }
    const entry: Entry = { update, dirty: true, written: 0 };
    journal.tail = entry;
    journal.pending.push(entry);
    this.#scheduleFlush();
  }

  /** The session's history, oldest first. */
  entries(sessionId: string): SessionUpdate[] {
    this.flush();
    const rows = this.#db.prepare("SELECT entry FROM hub_journal WHERE session_id = ? ORDER BY seq").all(sessionId) as Array<{ entry: string }>;
    return rows.map((row) => JSON.parse(row.entry) as SessionUpdate);
  }

  /** Writes what is pending now, in one transaction, and trims each journal to its bounds. */
  flush(): void {
    const dirty = [...this.#journals].filter(([, j]) => j.pending.length > 0);
    if (dirty.length === 0) return;
    const insert = this.#db.prepare("INSERT INTO hub_journal (session_id, entry) VALUES (?, ?)");
    const update = this.#db.prepare("UPDATE hub_journal SET entry = ? WHERE seq = ?");
    const totals = this.#db.prepare("SELECT count(*) AS n, coalesce(sum(length(CAST(entry AS BLOB))), 0) AS bytes FROM hub_journal WHERE session_id = ?");
    transaction(this.#db, () => {
      for (const [sessionId, journal] of dirty) {
        if (journal.count < 0) {
          const row = totals.get(sessionId) as { n: number; bytes: number };
          journal.count = Number(row.n);
          journal.bytes = Number(row.bytes);
        }
        for (const entry of journal.pending) {
          const json = JSON.stringify(entry.update);
          const size = Buffer.byteLength(json);
          if (entry.rowid === undefined) {
            entry.rowid = Number(insert.run(sessionId, json).lastInsertRowid);
            journal.count++;
          } else {
            update.run(json, entry.rowid);
          }
          journal.bytes += size - entry.written;
          entry.written = size;
          entry.dirty = false;
        }
        journal.pending = [];
        if (journal.count > this.#maxEntries || journal.bytes > this.#maxBytes) this.#trim(sessionId, journal);
      }
    });
  }

  /** Drops the oldest entries until the journal is within its bounds (the latest entry always stays). */
  #trim(sessionId: string, journal: SessionJournal): void {
    const oldest = this.#db.prepare("SELECT seq, length(CAST(entry AS BLOB)) AS size FROM hub_journal WHERE session_id = ? ORDER BY seq");
    let last: number | undefined;
    for (const row of oldest.iterate(sessionId) as Iterable<{ seq: number; size: number }>) {
      if ((journal.count <= this.#maxEntries && journal.bytes <= this.#maxBytes) || journal.count <= 1) break;
      last = Number(row.seq);
      journal.count--;
      journal.bytes -= Number(row.size);
    }
    if (last !== undefined) this.#db.prepare("DELETE FROM hub_journal WHERE session_id = ? AND seq <= ?").run(sessionId, last);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setTimeout(() => {
      this.#flushScheduled = false;
      this.flush();
    }, this.#flushMs);
  }
}
