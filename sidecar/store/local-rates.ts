// Per-person rate limit buckets kept in this process's memory: the RateStore
// of the embedded store, where one process serves every request. A token
// bucket holds `perMinute` requests and refills continuously. Deferred and
// plain requests draw from the same bucket (spec: Limits 3, "the rate limit
// for deferred completions equals the account's chat completion rate limit").
import type { RateDecision, RateStore } from "./shared-store.ts";

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets idle this long are full again and are forgotten, in milliseconds. */
const FORGET_AFTER_MS = 60_000;

export class LocalRates implements RateStore {
  readonly #clock: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    if (!(perMinute > 0)) throw new RangeError(`rate limit must be positive, got ${perMinute}`);
    const refillPerMs = perMinute / 60_000;
    const now = this.#clock();
    this.#forgetIdle(now);
    const bucket = this.#buckets.get(key) ?? { tokens: perMinute, at: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.at) * refillPerMs);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: (1 - bucket.tokens) / refillPerMs / 1000 };
  }

  #forgetIdle(now: number): void {
    if (this.#buckets.size < 1024) return;
    for (const [key, bucket] of this.#buckets) if (now - bucket.at > FORGET_AFTER_MS) this.#buckets.delete(key);
  }
}
