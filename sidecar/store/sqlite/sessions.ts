// The session directory and the journals in the embedded store (tables
// hub_sessions and hub_journal, made by ./schema.ts). One process owns the
// file, so it is every session's home: claims always succeed.
import type { StatementSync } from "node:sqlite";
import { type Database, preparedStatements, transaction } from "../store.ts";
import type { JournalBounds, JournalWrite, SessionRecord, SessionStore } from "../shared-store.ts";

interface Totals {
  count: number;
  bytes: number;
}

export class SqliteSessionStore implements SessionStore {
  readonly #db: Database;
  readonly #nodeId: string;
  readonly #sql: (text: string) => StatementSync;
  /** Rows and bytes of each journal, read once from the store and then kept up to date. */
  readonly #totals = new Map<string, Totals>();

  constructor(db: Database, nodeId: string) {
    this.#db = db;
    this.#sql = preparedStatements(db);
    this.#nodeId = nodeId;
  }

  async create(record: SessionRecord): Promise<boolean> {
    const inserted = this
      .#sql("INSERT INTO hub_sessions (id, record, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING")
      .run(record.id, JSON.stringify(record), record.updatedAt);
    return Number(inserted.changes) === 1;
  }

  async save(record: SessionRecord): Promise<boolean> {
    // The owner is compared in the same statement: another person's record stays as it is.
    const written = this
      .#sql(
        "INSERT INTO hub_sessions (id, record, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at " +
          "WHERE json_extract(hub_sessions.record, '$.ownerId') IS json_extract(excluded.record, '$.ownerId')",
      )
      .run(record.id, JSON.stringify(record), record.updatedAt);
    return Number(written.changes) === 1;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const row = this.#sql("SELECT record FROM hub_sessions WHERE id = ?").get(id) as { record: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.record) as SessionRecord);
  }

  async all(): Promise<SessionRecord[]> {
    const rows = this.#sql("SELECT record FROM hub_sessions").all() as Array<{ record: string }>;
    return rows.map((row) => JSON.parse(row.record) as SessionRecord);
  }

  async delete(id: string): Promise<void> {
    this.#totals.delete(id);
    transaction(this.#db, () => {
      this.#sql("DELETE FROM hub_journal WHERE session_id = ?").run(id);
      this.#sql("DELETE FROM hub_sessions WHERE id = ?").run(id);
    });
  }

  async writeJournal(writes: JournalWrite[], bounds: JournalBounds): Promise<void> {
    if (writes.length === 0) return;
    transaction(this.#db, () => {
      for (const write of writes) this.#write(write, bounds);
    });
  }

  #write(write: JournalWrite, bounds: JournalBounds): void {
    const totals = this.#totalsOf(write.sessionId);
    if (write.dropLast !== undefined && write.dropLast > 0) {
      const dropped = this.#sql("SELECT seq, length(CAST(entry AS BLOB)) AS size FROM hub_journal WHERE session_id = ? ORDER BY seq DESC LIMIT ?").all(write.sessionId, write.dropLast) as Array<{
        seq: number;
        size: number;
      }>;
      const oldest = dropped.at(-1);
      if (oldest !== undefined) {
        this.#sql("DELETE FROM hub_journal WHERE session_id = ? AND seq >= ?").run(write.sessionId, oldest.seq);
        totals.count -= dropped.length;
        for (const row of dropped) totals.bytes -= Number(row.size);
      }
    }
    if (write.replaceLast !== undefined) {
      const last = this.#sql("SELECT seq, length(CAST(entry AS BLOB)) AS size FROM hub_journal WHERE session_id = ? ORDER BY seq DESC LIMIT 1").get(write.sessionId) as
        | { seq: number; size: number }
        | undefined;
      if (last !== undefined) {
        this.#sql("UPDATE hub_journal SET entry = ? WHERE seq = ?").run(write.replaceLast, last.seq);
        totals.bytes += Buffer.byteLength(write.replaceLast) - Number(last.size);
      }
    }
    const insert = this.#sql("INSERT INTO hub_journal (session_id, entry) VALUES (?, ?)");
    for (const entry of write.append) {
      insert.run(write.sessionId, entry);
      totals.count++;
      totals.bytes += Buffer.byteLength(entry);
    }
    if (totals.count > bounds.maxEntries || totals.bytes > bounds.maxBytes) this.#trim(write.sessionId, totals, bounds);
  }

  #totalsOf(sessionId: string): Totals {
    let totals = this.#totals.get(sessionId);
    if (totals === undefined) {
      const row = this.#sql("SELECT count(*) AS n, coalesce(sum(length(CAST(entry AS BLOB))), 0) AS bytes FROM hub_journal WHERE session_id = ?").get(sessionId) as {
        n: number;
        bytes: number;
      };
      totals = { count: Number(row.n), bytes: Number(row.bytes) };
      this.#totals.set(sessionId, totals);
    }
    return totals;
  }

  /** Drops the oldest entries until the journal is within its bounds (the latest entry always stays). */
  #trim(sessionId: string, totals: Totals, bounds: JournalBounds): void {
    const oldest = this.#sql("SELECT seq, length(CAST(entry AS BLOB)) AS size FROM hub_journal WHERE session_id = ? ORDER BY seq");
    let last: number | undefined;
    for (const row of oldest.iterate(sessionId) as Iterable<{ seq: number; size: number }>) {
      if ((totals.count <= bounds.maxEntries && totals.bytes <= bounds.maxBytes) || totals.count <= 1) break;
      last = Number(row.seq);
      totals.count--;
      totals.bytes -= Number(row.size);
    }
    if (last !== undefined) this.#sql("DELETE FROM hub_journal WHERE session_id = ? AND seq <= ?").run(sessionId, last);
  }

  async journal(id: string): Promise<string[]> {
    const rows = this.#sql("SELECT entry FROM hub_journal WHERE session_id = ? ORDER BY seq").all(id) as Array<{ entry: string }>;
    return rows.map((row) => row.entry);
  }

  async journalTail(id: string, count: number): Promise<string[]> {
    if (count <= 0) return [];
    const rows = this.#sql("SELECT entry FROM hub_journal WHERE session_id = ? ORDER BY seq DESC LIMIT ?").all(id, count) as Array<{ entry: string }>;
    return rows.reverse().map((row) => row.entry);
  }

  async home(id: string): Promise<string | undefined> {
    return (await this.get(id)) === undefined ? undefined : this.#nodeId;
  }

  async claimHome(): Promise<boolean> {
    return true;
  }

  async releaseHome(): Promise<void> {}
}
