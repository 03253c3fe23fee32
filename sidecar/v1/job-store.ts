// The rows of deferred completions in the sidecar's store (design: Deferred
// completions, decisions 2 and 3). A job row goes
//
//   pending ──claim──▶ running ──▶ done | failed ──take──▶ (deleted)
//
// and every row is deleted once it is older than the TTL (spec: Limits 2)
// whatever its state. Writes are synchronous SQLite statements, so a state a
// response reports is on disk before the response leaves.
//
// Retrieval is exactly once (spec: Limits 1) because it is one statement,
// `DELETE ... RETURNING`, guarded by the state: of any number of concurrent
// takes, in this process or another on the same file, one deletes the row and
// gets it, the others find nothing.
import { randomUUID } from "node:crypto";
import type { StatementSync } from "node:sqlite";
import type { Database } from "../store/store.ts";
import type { ErrorBody } from "./errors.ts";

export type JobState = "pending" | "running" | "done" | "failed";

export interface Job {
  id: string;
  /** Principal id of the key that created it; another key is told 404. */
  owner: string;
  /** Concurrency key of the backend that runs it. */
  backend: string;
  model: string;
  /** The validated request, as JSON. */
  request: string;
  /** Milliseconds since the epoch, from the injected clock. */
  createdAt: number;
  attempts: number;
}

export type Retrieval =
  | { kind: "ready"; status: number; body: unknown }
  | { kind: "pending" }
  /** Unknown, already retrieved, expired, or another key's: all the same 404. */
  | { kind: "gone" };

/** A row deleted by cancel or sweep. */
export interface Removed {
  id: string;
  owner: string;
  /** It was pending or running. */
  active: boolean;
}

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

export class JobStore {
  readonly #db: Database;
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: Database, options: { clock: () => number; ttlMs: number }) {
    this.#db = db;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    this.#db.exec(SCHEMA);
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

  /** Jobs cut off by a crash: failed with `body` once started `maxAttempts` times, else pending again. */
  recover(maxAttempts: number, body: ErrorBody): void {
    this
      .#sql("UPDATE v1_jobs SET state = 'failed', status = 500, result = ? WHERE state = 'running' AND attempts >= ?")
      .run(JSON.stringify(body), maxAttempts);
    this.#sql("UPDATE v1_jobs SET state = 'pending' WHERE state = 'running'").run();
  }

  /** Backends with pending jobs. */
  pendingBackends(): string[] {
    return (this.#sql("SELECT backend FROM v1_jobs WHERE state = 'pending' GROUP BY backend").all() as Row[]).map((r) => String(r["backend"]));
  }

  /** Jobs pending or running per owner. */
  activeCounts(): Map<string, number> {
    const rows = this.#sql("SELECT owner, count(*) AS n FROM v1_jobs WHERE state IN ('pending', 'running') GROUP BY owner").all() as Row[];
    return new Map(rows.map((r) => [String(r["owner"]), Number(r["n"])]));
  }

  /** A new pending row; returns its id. */
  insert(owner: string, backend: string, model: string, request: unknown): string {
    const id = randomUUID();
    this
      .#sql("INSERT INTO v1_jobs (id, owner, backend, model, request, state, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)")
      .run(id, owner, backend, model, JSON.stringify(request), this.#clock());
    return id;
  }

  /** The result exactly once, "pending" while it runs, "gone" otherwise. */
  take(owner: string, id: string): Retrieval {
    // Most polls find the job still pending: a read answers them without a
    // write transaction. Only a finished job goes on to the guarded DELETE.
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

  state(owner: string, id: string): JobState | undefined {
    const row = this
      .#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?")
      .get(id, owner, this.#horizon()) as Row | undefined;
    return row ? (row["state"] as JobState) : undefined;
  }

  /** Deletes the row in any state; undefined when it is gone. */
  delete(owner: string, id: string): Removed | undefined {
    const row = this
      .#sql("DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ? RETURNING state")
      .get(id, owner, this.#horizon()) as Row | undefined;
    return row ? { id, owner, active: ACTIVE.has(String(row["state"])) } : undefined;
  }

  /** Deletes every row older than the TTL. */
  expire(): Removed[] {
    const rows = this.#sql("DELETE FROM v1_jobs WHERE created_at <= ? RETURNING id, owner, state").all(this.#horizon()) as Row[];
    return rows.map((r) => ({ id: String(r["id"]), owner: String(r["owner"]), active: ACTIVE.has(String(r["state"])) }));
  }

  /** One statement picks and claims (running, attempts + 1) the oldest pending job of `backend`. */
  claim(backend: string): Job | undefined {
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

  /** A running job's outcome; false when the row is no longer running (cancelled, expired). */
  finish(id: string, state: "done" | "failed", status: number, body: unknown): boolean {
    const changed = this
      .#sql("UPDATE v1_jobs SET state = ?, status = ?, result = ? WHERE id = ? AND state = 'running'")
      .run(state, status, JSON.stringify(body), id);
    return Number(changed.changes) === 1;
  }

  /** A running job back to pending, its attempt not counted (graceful stop). */
  release(id: string): void {
    this.#sql("UPDATE v1_jobs SET state = 'pending', attempts = max(attempts - 1, 0) WHERE id = ? AND state = 'running'").run(id);
  }
}
