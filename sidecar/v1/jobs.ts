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
import type { ErrorBody } from "./errors.ts";
import { toV1Error, timedOut } from "./errors.ts";
import type { Slots } from "./slots.ts";
import type { Job, JobState, JobStore, NodeStore, Removed, Retrieval } from "../store/shared-store.ts";
import {
  DEFAULT_V1_JOB_TIMEOUT_MS,
  DEFAULT_V1_MAX_JOB_ATTEMPTS,
  DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  DEFAULT_V1_SWEEP_INTERVAL_MS,
} from "../limits.ts";

export type { Job, JobState, Retrieval } from "../store/shared-store.ts";

/** What a finished job answers on its one GET: 200 and a completion, or an error status and body. */
export interface JobOutcome {
  status: number;
  body: unknown;
}

export interface JobQueueOptions {
  /** Where jobs live: the embedded store, or the shared one that other nodes also run jobs from. */
  store: JobStore;
  slots: Slots;
  /** Runs one job to its outcome; a thrown error becomes the failed job's status and body. */
  run(job: Job, signal: AbortSignal): Promise<JobOutcome>;
  sweepIntervalMs?: number;
  /**
   * On a shared store: how often to look for jobs other nodes queued or left
   * behind when they died (recover, then claim), in milliseconds. Absent on
   * the embedded store, where only a start recovers.
   */
  rescanMs?: number;
  maxAttempts?: number;
  maxPendingPerOwner?: number;
  jobTimeoutMs?: number;
  /**
   * The nodes' events, on a shared store: a job cancelled through another
   * node is stopped here when it runs here, and this node says so of the
   * jobs it cancels. Absent: one process sees every cancel itself.
   */
  events?: Pick<NodeStore, "publish" | "subscribe">;
  /** Called after every change of a job's state, with the owner's principal id (the editor hears its person's jobs). */
  onChange?: (id: string, state: JobState | "deleted", owner: string) => void;
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
  readonly #sweepTimer: NodeJS.Timeout;
  #rescanTimer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;
  readonly #events: JobQueueOptions["events"];
  #closed = false;
  #pumping = false;
  #pumpAgain = false;

  constructor(options: JobQueueOptions) {
    this.#store = options.store;
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
    this.#interrupted = interrupted;
    this.#sweepTimer = setInterval(() => void this.sweep().catch(() => undefined), options.sweepIntervalMs ?? DEFAULT_V1_SWEEP_INTERVAL_MS);
    this.#sweepTimer.unref();
    if (options.rescanMs !== undefined) {
      this.#rescanTimer = setInterval(() => void this.#recover().catch(() => undefined), options.rescanMs);
      this.#rescanTimer.unref();
    }
    const unfreed = this.#slots.onFreed(() => this.#pump());
    this.#events = options.events;
    const unheard =
      options.events?.subscribe((event) => {
        if (event.kind === "job-removed") this.#running.get(event.id)?.controller.abort(new Error("cancelled on another node"));
      }) ?? (() => undefined);
    this.#unsubscribe = () => {
      unfreed();
      unheard();
    };
    this.ready = this.#recover().catch(() => undefined);
  }

  /** Settles once the jobs of an earlier run (or of a dead node) are queued again. */
  readonly ready: Promise<void>;
  readonly #interrupted: ErrorBody;

  async #recover(): Promise<void> {
    await this.#store.recover(this.#maxAttempts, this.#interrupted);
    await this.sweep();
    await this.wake();
  }

  /** Looks again for pending jobs: another node queued some, or a dead node's jobs came back to pending. */
  async wake(backends?: Iterable<string>): Promise<void> {
    for (const backend of backends ?? (await this.#store.pendingBackends())) this.#waiting.add(backend);
    this.#pump();
  }

  /** Queues a job (spec: state none → pending); resolves with its request_id once stored. Throws TooManyJobsError. */
  async submit(owner: string, backend: string, model: string, request: unknown): Promise<string> {
    const id = await this.#store.insert(owner, backend, model, request, this.#maxPending);
    if (id === undefined) throw new TooManyJobsError(this.#maxPending);
    this.#waiting.add(backend);
    this.#onChange(id, "pending", owner);
    this.#pump();
    return id;
  }

  /** The GET (spec: States and transitions): 202 while pending, the result exactly once, then 404. */
  async take(owner: string, id: string): Promise<Retrieval> {
    const got = await this.#store.take(owner, id);
    if (got.kind === "ready") this.#onChange(id, "deleted", owner);
    return got;
  }

  /** The state of a job without retrieving it; undefined when it is gone. */
  state(owner: string, id: string): Promise<JobState | undefined> {
    return this.#store.state(owner, id);
  }

  /** DELETE (beyond the spec): discards the job in any state, aborting it if it runs. False when gone. */
  async cancel(owner: string, id: string): Promise<boolean> {
    const removed = await this.#store.delete(owner, id);
    if (!removed) return false;
    this.#forget(removed, "cancelled");
    return true;
  }

  /** Deletes every job older than the TTL (spec: ready → discarded after 24 hours), aborting those still running. */
  async sweep(): Promise<number> {
    const removed = await this.#store.expire();
    for (const r of removed) this.#forget(r, "expired");
    return removed.length;
  }

  #forget(removed: Removed, why: string): void {
    const here = this.#running.get(removed.id);
    here?.controller.abort(new Error(why));
    // Running on another node: that node stops it.
    if (here === undefined && removed.active) void this.#events?.publish({ kind: "job-removed", id: removed.id }).catch(() => undefined);
    this.#onChange(removed.id, "deleted", removed.owner);
  }

  /**
   * Starts pending jobs, oldest first per backend, while the backend has a
   * free slot. One pump at a time: a slot freed meanwhile asks for another.
   */
  #pump(): void {
    if (this.#closed) return;
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    void this.#drainWaiting()
      .catch(() => undefined)
      .finally(() => {
        this.#pumping = false;
        if (this.#pumpAgain) {
          this.#pumpAgain = false;
          this.#pump();
        }
      });
  }

  async #drainWaiting(): Promise<void> {
    for (const backend of [...this.#waiting]) {
      while (!this.#closed && this.#slots.tryAcquire(backend)) {
        let job: Job | undefined;
        try {
          job = await this.#store.claim(backend);
        } catch (error) {
          // The store is unreachable: the backend stays waiting for the next pump.
          this.#slots.release(backend);
          throw error;
        }
        if (!job) {
          this.#slots.release(backend);
          this.#waiting.delete(backend);
          break;
        }
        if (this.#closed) {
          await this.#store.release(job.id);
          this.#slots.release(backend);
          return;
        }
        this.#start(job);
      }
    }
  }

  #start(job: Job): void {
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(this.#jobTimeoutMs)]);
    this.#onChange(job.id, "running", job.owner);
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
      try {
        if (await this.#store.finish(job.id, state, outcome.status, outcome.body)) this.#onChange(job.id, state, job.owner);
      } catch {
        // The store is unreachable: the job stays running on it, and is run
        // again once its lease runs out (shared store) or at the next start.
      }
    })();
    this.#running.set(job.id, { controller, done });
  }

  /** Stops the queue: running jobs go back to pending (their attempt not counted) and are aborted. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweepTimer);
    clearInterval(this.#rescanTimer);
    this.#unsubscribe();
    await Promise.allSettled([...this.#running.keys()].map((id) => this.#store.release(id)));
    const running = [...this.#running.values()];
    for (const r of running) r.controller.abort(new Error("the sidecar is stopping"));
    await Promise.allSettled(running.map((r) => r.done));
  }
}
