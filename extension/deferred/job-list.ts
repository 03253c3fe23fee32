// The deferred jobs this editor submitted, kept in the extension's global
// state so that they outlive a window reload (the sidecar keeps the results;
// this list remembers which request_ids are ours and what we learned).
import type { CompletionResult } from "./api.ts";

export type JobStatus =
  /** Submitted; the result has not been fetched. */
  | "pending"
  /** Fetched in the background and kept here; not opened yet. */
  | "ready"
  /** Fetched and shown. */
  | "opened"
  /** The job failed; `error` says why. */
  | "failed"
  /** The server no longer knows it (expired, fetched elsewhere, or another sidecar). */
  | "gone"
  | "cancelled";

export interface DeferredJobEntry {
  requestId: string;
  model: string;
  /** The prompt as submitted (for the tree and the result document). */
  prompt: string;
  /** Base URL of the sidecar that holds it. */
  serverUrl: string;
  /** Milliseconds since the epoch. */
  submittedAt: number;
  status: JobStatus;
  /** When the server finished the job, milliseconds since the epoch by its clock (from its event). */
  finishedAt?: number;
  error?: string;
  /** Kept while `ready` or `opened`, so that the result can be shown again: the server gives it once. */
  result?: CompletionResult;
}

/** The part of `vscode.Memento` the list needs. */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

const JOBS_STATE_KEY = "acpRemote.deferred.jobs";
/** Entries kept; the oldest finished ones are dropped first. */
export const MAX_REMEMBERED_JOBS = 100;

const FINISHED: ReadonlySet<JobStatus> = new Set<JobStatus>(["opened", "failed", "gone", "cancelled"]);

export class JobList {
  readonly #state: StateStore;
  readonly #listeners = new Set<() => void>();

  constructor(state: StateStore) {
    this.#state = state;
  }

  all(): DeferredJobEntry[] {
    return this.#state.get<DeferredJobEntry[]>(JOBS_STATE_KEY) ?? [];
  }

  get(requestId: string): DeferredJobEntry | undefined {
    return this.all().find((j) => j.requestId === requestId);
  }

  /** Newest first. */
  async add(entry: DeferredJobEntry): Promise<void> {
    let jobs = [entry, ...this.all().filter((j) => j.requestId !== entry.requestId)];
    while (jobs.length > MAX_REMEMBERED_JOBS) {
      const oldestFinished = jobs.map((j) => FINISHED.has(j.status)).lastIndexOf(true);
      jobs = jobs.filter((_, i) => i !== (oldestFinished >= 0 ? oldestFinished : jobs.length - 1));
    }
    await this.#save(jobs);
  }

  async update(requestId: string, patch: Partial<Omit<DeferredJobEntry, "requestId">>): Promise<DeferredJobEntry | undefined> {
    let updated: DeferredJobEntry | undefined;
    const jobs = this.all().map((j) => (j.requestId === requestId ? (updated = { ...j, ...patch }) : j));
    if (updated) await this.#save(jobs);
    return updated;
  }

  async remove(requestId: string): Promise<void> {
    await this.#save(this.all().filter((j) => j.requestId !== requestId));
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  async #save(jobs: DeferredJobEntry[]): Promise<void> {
    await this.#state.update(JOBS_STATE_KEY, jobs);
    for (const listener of this.#listeners) listener();
  }
}
