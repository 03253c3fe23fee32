// Deferred completions in the embedded store (the JobStore of
// ../shared-store.ts, design: Deferred completions, decisions 2 and 3): one
// row a job, deleted once older than the TTL (spec: Limits 2) whatever its
// state. Writes are synchronous SQLite statements, so a state a response
// reports is on disk before the response leaves.
//
// Retrieval is exactly once (spec: Limits 1) because it is one statement,
// `DELETE ... RETURNING`, guarded by the state: of any number of concurrent
// takes, in this process or another on the same file, one deletes the row and
// gets it, the others find nothing.
import { randomUUID } from "node:crypto";
import type { StatementSync } from "node:sqlite";
import type { Database } from "../store.ts";
import type { Job, JobState, JobStore, Removed, Retrieval } from "../shared-store.ts";

interface Row {
  [key: string]: unknown;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS v1_jobs (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  backend    TEXT NOT NULL,
  model      TEXT NOT NULL,
  request    TEXT NOT NULL,
  state      TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
  created_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  status     INTEGER,
  result     TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS v1_jobs_by_state ON v1_jobs (state, created_at);
CREATE INDEX IF NOT EXISTS v1_jobs_by_backend ON v1_jobs (state, backend, created_at);
CREATE INDEX IF NOT EXISTS v1_jobs_by_owner ON v1_jobs (owner, state);
`;

const ACTIVE: ReadonlySet<string> = new Set(["pending", "running"]);

export class SqliteJobStore implements JobStore {
  readonly #db: Database;
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #statements = new Map<string, StatementSync>();
  /** Jobs pending or running per owner, counted once and then kept in memory: a submission does not count rows. */
  #active: Map<string, number> | undefined;

  constructor(db: Database, options: { clock: () => number; ttlMs: number }) {
    this.#db = db;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    this.#db.exec(SCHEMA);
  }

  #counts(): Map<string, number> {
    if (this.#active === undefined) {
      const rows = this.#sql("SELECT owner, count(*) AS n FROM v1_jobs WHERE state IN ('pending', 'running') GROUP BY owner").all() as Row[];
      this.#active = new Map(rows.map((r) => [String(r["owner"]), Number(r["n"])]));
    }
    return this.#active;
  }

  #changeActive(owner: string, delta: number): void {
    // Not counted yet (a fresh store, or just after recover): the count read
    // later sees the row already changed, so changing it here would count it twice.
    if (this.#active === undefined) return;
    const counts = this.#active;
    const n = (counts.get(owner) ?? 0) + delta;
    if (n > 0) counts.set(owner, n);
    else counts.delete(owner);
  }

  /**
   * The prepared statement for `text`, compiled once: a GET or a submission
   * would otherwise spend more time compiling its SQL than running it.
   */
  #sql(text: string): StatementSync {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.#db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  /** Rows older than this were created more than the TTL ago: expired. */
  #horizon(): number {
    return this.#clock() - this.#ttlMs;
  }

  /** Jobs cut off by a crash of the one process on this file: every running row. */
  async recover(maxAttempts: number, body: unknown): Promise<number> {
    this
      .#sql("UPDATE v1_jobs SET state = 'failed', status = 500, result = ? WHERE state = 'running' AND attempts >= ?")
      .run(JSON.stringify(body), maxAttempts);
    const back = this.#sql("UPDATE v1_jobs SET state = 'pending' WHERE state = 'running'").run();
    this.#active = undefined;
    return Number(back.changes);
  }

  async pendingBackends(): Promise<string[]> {
    return (this.#sql("SELECT backend FROM v1_jobs WHERE state = 'pending' GROUP BY backend").all() as Row[]).map((r) => String(r["backend"]));
  }

  async insert(owner: string, backend: string, model: string, request: unknown, maxActive: number): Promise<string | undefined> {
    if ((this.#counts().get(owner) ?? 0) >= maxActive) return undefined;
    const id = randomUUID();
    this
      .#sql("INSERT INTO v1_jobs (id, owner, backend, model, request, state, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)")
      .run(id, owner, backend, model, JSON.stringify(request), this.#clock());
    this.#changeActive(owner, +1);
    return id;
  }

  async take(owner: string, id: string): Promise<Retrieval> {
    // Most polls find the job still pending: a read answers them without a
    // write transaction. Only a finished job goes on to the guarded DELETE,
    // one statement, so of concurrent takes (in this process or another on
    // the same file) one deletes the row and gets it, the others find nothing.
    const horizon = this.#horizon();
    const row = this.#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?").get(id, owner, horizon) as Row | undefined;
    if (!row) return { kind: "gone" };
    if (ACTIVE.has(String(row["state"]))) return { kind: "pending" };
    const taken = this
      .#sql(
        "DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND state IN ('done', 'failed') AND created_at > ? RETURNING status, result",
      )
      .get(id, owner, horizon) as Row | undefined;
    // Another take deleted it between the two statements: it was retrieved once, by that one.
    if (!taken) return { kind: "gone" };
    return { kind: "ready", status: Number(taken["status"]), body: JSON.parse(String(taken["result"])) };
  }

  async state(owner: string, id: string): Promise<JobState | undefined> {
    const row = this
      .#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?")
      .get(id, owner, this.#horizon()) as Row | undefined;
    return row ? (row["state"] as JobState) : undefined;
  }

  async delete(owner: string, id: string): Promise<Removed | undefined> {
    const row = this
      .#sql("DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ? RETURNING state")
      .get(id, owner, this.#horizon()) as Row | undefined;
    if (!row) return undefined;
    const removed = { id, owner, active: ACTIVE.has(String(row["state"])) };
    if (removed.active) this.#changeActive(owner, -1);
    return removed;
  }

  async expire(): Promise<Removed[]> {
    const rows = this.#sql("DELETE FROM v1_jobs WHERE created_at <= ? RETURNING id, owner, state").all(this.#horizon()) as Row[];
    const removed = rows.map((r) => ({ id: String(r["id"]), owner: String(r["owner"]), active: ACTIVE.has(String(r["state"])) }));
    for (const r of removed) if (r.active) this.#changeActive(r.owner, -1);
    return removed;
  }

  async claim(backend: string): Promise<Job | undefined> {
    const claimed = this
      .#sql(
        "UPDATE v1_jobs SET state = 'running', attempts = attempts + 1 WHERE id = " +
          "(SELECT id FROM v1_jobs WHERE state = 'pending' AND backend = ? AND created_at > ? ORDER BY created_at, rowid LIMIT 1) " +
          "RETURNING id, owner, backend, model, request, created_at, attempts",
      )
      .get(backend, this.#horizon()) as Row | undefined;
    if (!claimed) return undefined;
    return {
      id: String(claimed["id"]),
      owner: String(claimed["owner"]),
      backend,
      model: String(claimed["model"]),
      request: String(claimed["request"]),
      createdAt: Number(claimed["created_at"]),
      attempts: Number(claimed["attempts"]),
    };
  }

  async finish(id: string, state: "done" | "failed", status: number, body: unknown): Promise<boolean> {
    const row = this
      .#sql("UPDATE v1_jobs SET state = ?, status = ?, result = ? WHERE id = ? AND state = 'running' RETURNING owner")
      .get(state, status, JSON.stringify(body), id) as Row | undefined;
    if (!row) return false;
    this.#changeActive(String(row["owner"]), -1);
    return true;
  }

  async release(id: string): Promise<void> {
    this.#sql("UPDATE v1_jobs SET state = 'pending', attempts = max(attempts - 1, 0) WHERE id = ? AND state = 'running'").run(id);
  }
}
