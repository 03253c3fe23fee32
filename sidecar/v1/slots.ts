// Bounded concurrency per backend (an agent, or the upstream provider), shared
// by deferred jobs and plain or streamed completions so that together they
// never run more than `perKey` completions on one backend.
import { listen } from "../../common/listeners.ts";

export class Slots {
  readonly #perKey: number;
  readonly #used = new Map<string, number>();
  readonly #waiters = new Map<string, Array<() => void>>();
  readonly #freed = new Set<(key: string) => void>();

  constructor(perKey: number) {
    if (!Number.isInteger(perKey) || perKey < 1) throw new RangeError(`concurrency per backend must be a positive integer, got ${perKey}`);
    this.#perKey = perKey;
  }

  inUse(key: string): number {
    return this.#used.get(key) ?? 0;
  }

  /** Takes a slot if one is free; never waits. */
  tryAcquire(key: string): boolean {
    const used = this.inUse(key);
    if (used >= this.#perKey) return false;
    this.#used.set(key, used + 1);
    return true;
  }

  /** Waits for a slot (callers that wait are served before the job queue is offered the slot). */
  acquire(key: string, signal: AbortSignal): Promise<void> {
    if (this.tryAcquire(key)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const queue = this.#waiters.get(key) ?? [];
      this.#waiters.set(key, queue);
      const grant = (): void => {
        signal.removeEventListener("abort", abort);
        resolve();
      };
      const abort = (): void => {
        const i = queue.indexOf(grant);
        if (i >= 0) queue.splice(i, 1);
        reject(signal.reason);
      };
      if (signal.aborted) return abort();
      signal.addEventListener("abort", abort, { once: true });
      queue.push(grant);
    });
  }

  release(key: string): void {
    const next = this.#waiters.get(key)?.shift();
    if (next) return next(); // the slot passes straight to the waiter
    const used = this.inUse(key) - 1;
    if (used <= 0) this.#used.delete(key);
    else this.#used.set(key, used);
    for (const listener of this.#freed) listener(key);
  }

  /** Called when a slot of `key` becomes free and nobody waits for it. Returns an unsubscribe. */
  onFreed(listener: (key: string) => void): () => void {
    return listen(this.#freed, listener);
  }
}
