// The executor of deferred completions (design: Deferred completions,
// decisions 2 and 3): it runs the jobs of the store (job-store.ts) on their
// backends, oldest first, with the concurrency the slots allow, a timeout per
// job, and a bounded number of attempts.
//
// Restart: a job that was `running` when the sidecar died is started again
// (one-shot prompts have no partial result to keep), up to `maxAttempts`
// starts; after that it is reported failed (500) rather than run forever.
// A graceful close puts running jobs back to pending without counting the
// attempt.
import type { Database } from "../store/store.ts";
import type { ErrorBody } from "./errors.ts";
import { toV1Error, timedOut } from "./errors.ts";
import type { Slots } from "./slots.ts";
import { JobStore, type Job, type JobState, type Removed, type Retrieval } from "./job-store.ts";
import {
  DEFAULT_V1_JOB_TIMEOUT_MS,
  DEFAULT_V1_MAX_JOB_ATTEMPTS,
  DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  DEFAULT_V1_RESULT_TTL_MS,
  DEFAULT_V1_SWEEP_INTERVAL_MS,
} from "../limits.ts";

export type { Job, JobState, Retrieval } from "./job-store.ts";

/** What a finished job answers on its one GET: 200 and a completion, or an error status and body. */
export interface JobOutcome {
  status: number;
  body: unknown;
}

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

export class TooManyJobsError extends Error {
  constructor(limit: number) {
    super(`This key already has ${limit} deferred completions waiting or running; fetch or cancel some first.`);
    this.name = "TooManyJobsError";
  }
}

export class JobQueue {
  readonly #store: JobStore;
  readonly #slots: Slots;
  readonly #run: JobQueueOptions["run"];
  readonly #maxAttempts: number;
  readonly #maxPending: number;
  readonly #jobTimeoutMs: number;
  readonly #onChange: NonNullable<JobQueueOptions["onChange"]>;
  readonly #running = new Map<string, Running>();
  /** Backends that may have pending jobs: the scheduler looks only at these. */
  readonly #waiting = new Set<string>();
  /** Jobs pending or running per owner, kept in memory so a submission does not count rows. */
  readonly #active: Map<string, number>;
  readonly #sweepTimer: NodeJS.Timeout;
  readonly #unsubscribe: () => void;
  #closed = false;
  #pumping = false;

  constructor(options: JobQueueOptions) {
    this.#store = new JobStore(options.db, { clock: options.clock ?? Date.now, ttlMs: options.ttlMs ?? DEFAULT_V1_RESULT_TTL_MS });
    this.#slots = options.slots;
    this.#run = options.run;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_V1_MAX_JOB_ATTEMPTS;
    this.#maxPending = options.maxPendingPerOwner ?? DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY;
    this.#jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_V1_JOB_TIMEOUT_MS;
    this.#onChange = options.onChange ?? (() => {});
    const interrupted: ErrorBody = {
      error: {
        message: `The sidecar stopped while this completion ran, ${this.#maxAttempts} times; it is not started again.`,
        type: "server_error",
        param: null,
        code: "interrupted",
      },
    };
    this.#store.recover(this.#maxAttempts, interrupted);
    for (const backend of this.#store.pendingBackends()) this.#waiting.add(backend);
    this.#active = this.#store.activeCounts();
    this.sweep();
    this.#sweepTimer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? DEFAULT_V1_SWEEP_INTERVAL_MS);
    this.#sweepTimer.unref();
    this.#unsubscribe = this.#slots.onFreed(() => this.#pump());
    queueMicrotask(() => this.#pump());
  }

  /** Queues a job (spec: state none → pending); returns its request_id. Throws TooManyJobsError. */
  submit(owner: string, backend: string, model: string, request: unknown): string {
    if ((this.#active.get(owner) ?? 0) >= this.#maxPending) throw new TooManyJobsError(this.#maxPending);
    const id = this.#store.insert(owner, backend, model, request);
    this.#changeActive(owner, +1);
    this.#waiting.add(backend);
    this.#onChange(id, "pending");
    queueMicrotask(() => this.#pump());
    return id;
  }

  /** The GET (spec: States and transitions): 202 while pending, the result exactly once, then 404. */
  take(owner: string, id: string): Retrieval {
    const got = this.#store.take(owner, id);
    if (got.kind === "ready") this.#onChange(id, "deleted");
    return got;
  }

  /** The state of a job without retrieving it; undefined when it is gone. */
  state(owner: string, id: string): JobState | undefined {
    return this.#store.state(owner, id);
  }

  /** DELETE (beyond the spec): discards the job in any state, aborting it if it runs. False when gone. */
  cancel(owner: string, id: string): boolean {
    const removed = this.#store.delete(owner, id);
    if (!removed) return false;
    this.#forget(removed, "cancelled");
    return true;
  }

  /** Deletes every row older than the TTL (spec: ready → discarded after 24 hours), aborting those still running. */
  sweep(): number {
    const removed = this.#store.expire();
    for (const r of removed) this.#forget(r, "expired");
    return removed.length;
  }

  #forget(removed: Removed, why: string): void {
    if (removed.active) this.#changeActive(removed.owner, -1);
    this.#running.get(removed.id)?.controller.abort(new Error(why));
    this.#onChange(removed.id, "deleted");
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
      for (const backend of [...this.#waiting]) {
        while (this.#slots.tryAcquire(backend)) {
          const job = this.#store.claim(backend);
          if (!job) {
            this.#slots.release(backend);
            this.#waiting.delete(backend);
            break;
          }
          this.#start(job);
        }
      }
    } finally {
      this.#pumping = false;
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
      const state = outcome.status >= 200 && outcome.status < 300 ? "done" : "failed";
      if (this.#store.finish(job.id, state, outcome.status, outcome.body)) {
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
    for (const id of this.#running.keys()) this.#store.release(id);
    const running = [...this.#running.values()];
    for (const r of running) r.controller.abort(new Error("the sidecar is stopping"));
    await Promise.allSettled(running.map((r) => r.done));
  }
}
