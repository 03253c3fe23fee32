// Per-person rate buckets in Redis, so that a person's limit holds across
// every node (spec: Limits 3, deferred and plain requests draw from the same
// bucket). The same token bucket as the embedded store's (../local-rates.ts):
// `perMinute` requests, refilled continuously, one script a request. Time is
// Redis's own (TIME), the same for every node, unless a clock is given (tests).
import type { RateDecision, RateStore } from "../shared-store.ts";
import { DEFAULT_STORE_RATE_IDLE_MS } from "../limits.ts";
import { LuaScript, type RedisConnection } from "./connection.ts";
import { keys } from "./keys.ts";

/**
 * KEYS: the bucket. ARGV: per minute, now in ms ("" for Redis's TIME), idle expiry in ms.
 * {1} when a request is taken, {0, ms until one is there} otherwise.
 */
const TAKE = new LuaScript(`
local perMinute = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local refill = perMinute / 60000
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or perMinute
local at = tonumber(bucket[2]) or now
tokens = math.min(perMinute, tokens + math.max(0, now - at) * refill)
local allowed = tokens >= 1
if allowed then tokens = tokens - 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if allowed then return {1} end
return {0, tostring((1 - tokens) / refill)}
`);

export class RedisRates implements RateStore {
  readonly #redis: RedisConnection;
  readonly #clock: (() => number) | undefined;

  constructor(redis: RedisConnection, clock?: () => number) {
    this.#redis = redis;
    this.#clock = clock;
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    if (!(perMinute > 0)) throw new RangeError(`rate limit must be positive, got ${perMinute}`);
    const now = this.#clock === undefined ? "" : String(this.#clock());
    const reply = await this.#redis.eval(TAKE, [keys.rate(key)], [perMinute, now, DEFAULT_STORE_RATE_IDLE_MS]);
    const [allowed, waitMs] = Array.isArray(reply) ? reply : [];
    if (allowed === 1) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Number(waitMs) / 1000 };
  }
}
