// Per-key rate limit of chat completion requests: a token bucket that holds
// `perMinute` requests and refills continuously. Deferred and plain requests
// draw from the same bucket (spec: Limits 3, "the rate limit for deferred
// completions equals the account's chat completion rate limit").

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets idle this long are full again and are forgotten, in milliseconds. */
const FORGET_AFTER_MS = 60_000;

export class RateLimiter {
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #clock: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute: number, clock: () => number = Date.now) {
    if (!(perMinute > 0)) throw new RangeError(`rate limit must be positive, got ${perMinute}`);
    this.#capacity = perMinute;
    this.#refillPerMs = perMinute / 60_000;
    this.#clock = clock;
  }

  /** Takes one request from `key`'s bucket, or says how long until one is there. */
  take(key: string): RateDecision {
    const now = this.#clock();
    this.#forgetIdle(now);
    const bucket = this.#buckets.get(key) ?? { tokens: this.#capacity, at: now };
    bucket.tokens = Math.min(this.#capacity, bucket.tokens + Math.max(0, now - bucket.at) * this.#refillPerMs);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: (1 - bucket.tokens) / this.#refillPerMs / 1000 };
  }

  #forgetIdle(now: number): void {
    if (this.#buckets.size < 1024) return;
    for (const [key, bucket] of this.#buckets) if (now - bucket.at > FORGET_AFTER_MS) this.#buckets.delete(key);
  }
}
