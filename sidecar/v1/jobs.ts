// The durable queue of deferred completions, in the sidecar's store (design:
// Deferred completions, decisions 2 and 3). A job row goes
//
//   pending ──claim──▶ running ──▶ done | failed ──GET──▶ (deleted)
//
// and every row is deleted 24 hours after creation (spec: Limits 2) whatever
// its state. Writes are synchronous SQLite statements, so a state a response
// reports is on disk before the response leaves.
//
// Retrieval is exactly once (spec: Limits 1) because it is one statement,
// `DELETE ... RETURNING`, guarded by the state: of any number of concurrent
// GETs, in this process or another on the same file, one deletes the row and
// gets it, the others find nothing.
//
// Restart: a job that was `running` when the sidecar died is started again
// (one-shot prompts have no partial result to keep), up to `maxAttempts`
// starts; after that it is reported failed (500) rather than run forever.
// A graceful close puts running jobs back to pending without counting the
// attempt.
import { randomUUID } from "node:crypto";
import type { StatementSync } from "node:sqlite";
import type { Database } from "../store/store.ts";
import type { ErrorBody } from "./errors.ts";
import { toV1Error, timedOut } from "./errors.ts";
import type { Slots } from "./slots.ts";
import {
  DEFAULT_V1_JOB_TIMEOUT_MS,
  DEFAULT_V1_MAX_JOB_ATTEMPTS,
  DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  DEFAULT_V1_RESULT_TTL_MS,
  DEFAULT_V1_SWEEP_INTERVAL_MS,
} from "../limits.ts";

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

/** What a finished job answers on its one GET: 200 and a completion, or an error status and body. */
export interface JobOutcome {
  status: number;
  body: unknown;
}

export type Retrieval =
  | { kind: "ready"; status: number; body: unknown }
  | { kind: "pending" }
  /** Unknown, already retrieved, expired, or another key's: all the same 404. */
  | { kind: "gone" };

export interface JobQueueOptions {
  db: Database;
  slots: Slots;
  /** Runs one job to its outcome; a thrown error becomes the failed job's status and body. */
  run(job: Job, signal: AbortSignal): Promise<JobOutcome>;
  clock?: () => number;
  ttlMs?: number;
  sweepIntervalMs?: number;
  maxAttempts?: number;
  maxPendingPerOwner?: number;
  jobTimeoutMs?: number;
  /** Called after every change of a job's state (tests and logs). */
  onChange?: (id: string, state: JobState | "deleted") => void;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
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

export class TooManyJobsError extends Error {
  constructor(limit: number) {
    super(`This key already has ${limit} deferred completions waiting or running; fetch or cancel some first.`);
    this.name = "TooManyJobsError";
  }
}

export class JobQueue {
  readonly #db: Database;
  readonly #slots: Slots;
  readonly #run: JobQueueOptions["run"];
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #maxAttempts: number;
  readonly #maxPending: number;
  readonly #jobTimeoutMs: number;
  readonly #onChange: NonNullable<JobQueueOptions["onChange"]>;
  readonly #statements = new Map<string, StatementSync>();
  readonly #running = new Map<string, Running>();
  /** Backends that may have pending jobs: the scheduler looks only at these. */
  readonly #waiting = new Set<string>();
  /** Jobs pending or running per owner, kept in memory so a submission does not count rows. */
  readonly #active = new Map<string, number>();
  readonly #sweepTimer: NodeJS.Timeout;
  readonly #unsubscribe: () => void;
  #closed = false;
  #pumping = false;

  constructor(options: JobQueueOptions) {
    this.#db = options.db;
    this.#slots = options.slots;
    this.#run = options.run;
    this.#clock = options.clock ?? Date.now;
    this.#ttlMs = options.ttlMs ?? DEFAULT_V1_RESULT_TTL_MS;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_V1_MAX_JOB_ATTEMPTS;
    this.#maxPending = options.maxPendingPerOwner ?? DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY;
    this.#jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_V1_JOB_TIMEOUT_MS;
    this.#onChange = options.onChange ?? (() => {});
    this.#db.exec(SCHEMA);
    this.#recover();
    this.sweep();
    for (const row of this.#sql("SELECT backend FROM v1_jobs WHERE state = 'pending' GROUP BY backend").all() as Row[]) {
      this.#waiting.add(String(row["backend"]));
    }
    const owners = this.#sql("SELECT owner, count(*) AS n FROM v1_jobs WHERE state IN ('pending', 'running') GROUP BY owner").all() as Row[];
    for (const row of owners) this.#active.set(String(row["owner"]), Number(row["n"]));
    this.#sweepTimer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? DEFAULT_V1_SWEEP_INTERVAL_MS);
    this.#sweepTimer.unref();
    this.#unsubscribe = this.#slots.onFreed(() => this.#pump());
    queueMicrotask(() => this.#pump());
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

  /** Jobs cut off by a crash: run again, or failed once they have been started `maxAttempts` times. */
  #recover(): void {
    const body: ErrorBody = {
      error: {
        message: `The sidecar stopped while this completion ran, ${this.#maxAttempts} times; it is not started again.`,
        type: "server_error",
        param: null,
        code: "interrupted",
      },
    };
    this
      .#sql("UPDATE v1_jobs SET state = 'failed', status = 500, result = ? WHERE state = 'running' AND attempts >= ?")
      .run(JSON.stringify(body), this.#maxAttempts);
    this.#sql("UPDATE v1_jobs SET state = 'pending' WHERE state = 'running'").run();
  }

  /** Queues a job (spec: state none → pending); returns its request_id. Throws TooManyJobsError. */
  submit(owner: string, backend: string, model: string, request: unknown): string {
    if ((this.#active.get(owner) ?? 0) >= this.#maxPending) throw new TooManyJobsError(this.#maxPending);
    const id = randomUUID();
    this
      .#sql("INSERT INTO v1_jobs (id, owner, backend, model, request, state, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)")
      .run(id, owner, backend, model, JSON.stringify(request), this.#clock());
    this.#changeActive(owner, +1);
    this.#waiting.add(backend);
    this.#onChange(id, "pending");
    queueMicrotask(() => this.#pump());
    return id;
  }

  /** The GET (spec: States and transitions): 202 while pending, the result exactly once, then 404. */
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
    // Another GET deleted it between the two statements: it was retrieved once, by that GET.
    if (!taken) return { kind: "gone" };
    this.#onChange(id, "deleted");
    return { kind: "ready", status: Number(taken["status"]), body: JSON.parse(String(taken["result"])) };
  }

  /** The state of a job without retrieving it; undefined when it is gone. */
  state(owner: string, id: string): JobState | undefined {
    const row = this
      .#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?")
      .get(id, owner, this.#horizon()) as Row | undefined;
    return row ? (row["state"] as JobState) : undefined;
  }

  /** DELETE (beyond the spec): discards the job in any state, aborting it if it runs. False when gone. */
  cancel(owner: string, id: string): boolean {
    const row = this
      .#sql("DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ? RETURNING state")
      .get(id, owner, this.#horizon()) as Row | undefined;
    if (!row) return false;
    if (ACTIVE.has(String(row["state"]))) this.#changeActive(owner, -1);
    this.#running.get(id)?.controller.abort(new Error("cancelled"));
    this.#onChange(id, "deleted");
    return true;
  }

  /** Deletes every row older than the TTL (spec: ready → discarded after 24 hours), aborting those still running. */
  sweep(): number {
    const rows = this.#sql("DELETE FROM v1_jobs WHERE created_at <= ? RETURNING id, owner, state").all(this.#horizon()) as Row[];
    for (const row of rows) {
      const id = String(row["id"]);
      if (ACTIVE.has(String(row["state"]))) this.#changeActive(String(row["owner"]), -1);
      this.#running.get(id)?.controller.abort(new Error("expired"));
      this.#onChange(id, "deleted");
    }
    return rows.length;
  }

  #changeActive(owner: string, delta: number): void {
    const n = (this.#active.get(owner) ?? 0) + delta;
    if (n > 0) this.#active.set(owner, n);
    else this.#active.delete(owner);
  }

  /** Starts pending jobs, oldest first per backend, while the backend has a free slot. */
  #pump(): void {
    // Releasing an unused slot below notifies onFreed, which calls back here.
    if (this.#closed || this.#pumping) return;
    this.#pumping = true;
    try {
      this.#pumpNow();
    } finally {
      this.#pumping = false;
    }
  }

  #pumpNow(): void {
    const next = this.#sql(
      "UPDATE v1_jobs SET state = 'running', attempts = attempts + 1 WHERE id = " +
        "(SELECT id FROM v1_jobs WHERE state = 'pending' AND backend = ? AND created_at > ? ORDER BY created_at, rowid LIMIT 1) " +
        "RETURNING id, owner, backend, model, request, created_at, attempts",
    );
    for (const backend of [...this.#waiting]) {
      while (this.#slots.tryAcquire(backend)) {
        // One statement picks and claims the oldest pending job of this backend.
        const claimed = next.get(backend, this.#horizon()) as Row | undefined;
        if (!claimed) {
          this.#slots.release(backend);
          this.#waiting.delete(backend);
          break;
        }
        this.#start({
          id: String(claimed["id"]),
          owner: String(claimed["owner"]),
          backend,
          model: String(claimed["model"]),
          request: String(claimed["request"]),
          createdAt: Number(claimed["created_at"]),
          attempts: Number(claimed["attempts"]),
        });
      }
    }
  }

  #start(job: Job): void {
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(this.#jobTimeoutMs)]);
    this.#onChange(job.id, "running");
    const done = (async (): Promise<void> => {
      let outcome: JobOutcome;
      try {
        outcome = await this.#run(job, signal);
      } catch (error) {
        const timeout = signal.aborted && !controller.signal.aborted;
        const e = timeout ? timedOut(this.#jobTimeoutMs) : toV1Error(error);
        outcome = { status: e.status, body: e.body() };
      }
      this.#running.delete(job.id);
      this.#slots.release(job.backend);
      // Closed: the row went back to pending. Cancelled or expired: the row is gone, nothing to write.
      if (this.#closed || controller.signal.aborted) return;
      const state: JobState = outcome.status >= 200 && outcome.status < 300 ? "done" : "failed";
      const changed = this
        .#sql("UPDATE v1_jobs SET state = ?, status = ?, result = ? WHERE id = ? AND state = 'running'")
        .run(state, outcome.status, JSON.stringify(outcome.body), job.id);
      if (Number(changed.changes) === 1) {
        this.#changeActive(job.owner, -1);
        this.#onChange(job.id, state);
      }
    })();
    this.#running.set(job.id, { controller, done });
  }

  /** Stops the queue: running jobs go back to pending (their attempt not counted) and are aborted. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweepTimer);
    this.#unsubscribe();
    const ids = [...this.#running.keys()];
    const reset = this.#sql("UPDATE v1_jobs SET state = 'pending', attempts = max(attempts - 1, 0) WHERE id = ? AND state = 'running'");
    for (const id of ids) reset.run(id);
    const running = [...this.#running.values()];
    for (const r of running) r.controller.abort(new Error("the sidecar is stopping"));
    await Promise.allSettled(running.map((r) => r.done));
  }
}
