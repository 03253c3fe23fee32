// Waiting between reconnect attempts, and bounding how long one attempt may
// wait for an answer. A reconnect loop can run for minutes against a server
// that stays down: every wait here takes back its listener and its timer when
// it ends, so nothing piles up per attempt.

/** Resolves after `ms`, or at once when `signal` aborts; leaves no listener or timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * The delays of a reconnect loop: the first attempt goes at once (a cut
 * connection to a live server comes straight back), the next ones back off
 * exponentially from `minMs` up to `maxMs`.
 */
export class Backoff {
  readonly #minMs: number;
  readonly #maxMs: number;
  #delayMs = 0;

  constructor(minMs: number, maxMs: number) {
    this.#minMs = minMs;
    this.#maxMs = Math.max(minMs, maxMs);
  }

  /** The delay before the coming attempt, in milliseconds. */
  get delayMs(): number {
    return this.#delayMs;
  }

  /** An attempt failed: the next delay, in milliseconds. */
  next(): number {
    this.#delayMs = this.#delayMs === 0 ? this.#minMs : Math.min(this.#delayMs * 2, this.#maxMs);
    return this.#delayMs;
  }
}

/**
 * Races `work` against a deadline of `ms`; the deadline's timer is cleared as
 * soon as the race is decided, whichever way.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onExpiry: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onExpiry()), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
