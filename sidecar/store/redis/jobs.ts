// Deferred completions in Redis (the JobStore of ../shared-store.ts), shared
// by every node. Each change of a job's state is one Lua script, so it is
// atomic against every other node: of any number of concurrent takes of a
// finished job one gets it and the others find nothing (spec: Limits 1),
// two nodes never claim the same job, and an owner's limit of active jobs is
// checked and taken in the same step.
//
// The TTL clock is the one the store was given, as in the embedded store: a
// job's createdAt comes from it, and every script is told the horizon
// (clock() - ttlMs) below which a job counts as expired (spec: Limits 2).
// Job hashes also carry a PEXPIRE a margin beyond the TTL, in case no node
// sweeps; the indexes heal themselves of members whose hash is gone.
//
// A running job records the node that claimed it and the claiming process
// (`run`, one per store opened): it is that claim's to finish or release,
// and it is taken back (recover) when its node's heartbeat is gone, or when
// its node is this node but the process is an earlier one (a node restarted
// under the same id).
import { randomUUID } from "node:crypto";
import type { Job, JobState, JobStore, Removed, Retrieval } from "../shared-store.ts";
import { DEFAULT_STORE_EXPIRE_BATCH, DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS } from "../limits.ts";
import { LuaScript, type RedisConnection, type Reply } from "./connection.ts";
import { keys, PREFIX } from "./keys.ts";

/**
 * Removes job `id` (fields as read by the caller) from its hash and every index.
 * Members of the pending queue are "<16-digit sequence>:<id>", so that jobs
 * created in the same millisecond are claimed in the order they were stored.
 */
const FORGET = `
local function forget(p, id, owner, backend, member)
  redis.call('DEL', p .. 'job:' .. id)
  redis.call('ZREM', p .. 'jobs:created', id)
  redis.call('SREM', p .. 'jobs:running', id)
  if owner then redis.call('SREM', p .. 'jobs:active:' .. owner, id) end
  if backend and member then redis.call('ZREM', p .. 'jobs:pending:' .. backend, member) end
end
local function isActive(state) return state == 'pending' or state == 'running' end
`;

/**
 * ARGV: prefix, id, owner, backend, model, request, createdAt, max active, expiry in ms.
 * 1 when stored, 0 when the owner has `max` jobs pending or running already.
 */
const INSERT = new LuaScript(`
local p, id, owner, backend = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local active = p .. 'jobs:active:' .. owner
local max = tonumber(ARGV[8])
if redis.call('SCARD', active) >= max then
  -- Jobs the store expired by itself (no node swept them) no longer count.
  for _, other in ipairs(redis.call('SMEMBERS', active)) do
    if redis.call('EXISTS', p .. 'job:' .. other) == 0 then redis.call('SREM', active, other) end
  end
  if redis.call('SCARD', active) >= max then return 0 end
end
local member = string.format('%016d:%s', redis.call('INCR', p .. 'jobs:seq'), id)
local key = p .. 'job:' .. id
redis.call('HSET', key, 'owner', owner, 'backend', backend, 'model', ARGV[5], 'request', ARGV[6],
  'state', 'pending', 'createdAt', ARGV[7], 'attempts', 0, 'member', member)
redis.call('PEXPIRE', key, ARGV[9])
redis.call('SADD', active, id)
redis.call('ZADD', p .. 'jobs:created', ARGV[7], id)
redis.call('ZADD', p .. 'jobs:pending:' .. backend, ARGV[7], member)
redis.call('SADD', p .. 'jobs:backends', backend)
return 1
`);

/**
 * ARGV: prefix, id, owner, horizon.
 * {"gone"}, {"pending"}, or {"ready", status, result} with the job deleted in the same step.
 */
const TAKE = new LuaScript(`${FORGET}
local p, id = ARGV[1], ARGV[2]
local j = redis.call('HMGET', p .. 'job:' .. id, 'owner', 'backend', 'state', 'createdAt', 'member', 'status', 'result')
if j[1] ~= ARGV[3] or (tonumber(j[4]) or -math.huge) <= tonumber(ARGV[4]) then return {'gone'} end
if isActive(j[3]) then return {'pending'} end
forget(p, id, j[1], j[2], j[5])
return {'ready', j[6], j[7]}
`);

/** ARGV: prefix, id, owner, horizon. The state the job had, or nil when it is gone. */
const DELETE = new LuaScript(`${FORGET}
local p, id = ARGV[1], ARGV[2]
local j = redis.call('HMGET', p .. 'job:' .. id, 'owner', 'backend', 'state', 'createdAt', 'member')
if j[1] ~= ARGV[3] or (tonumber(j[4]) or -math.huge) <= tonumber(ARGV[4]) then return false end
forget(p, id, j[1], j[2], j[5])
return j[3]
`);

/**
 * ARGV: prefix, horizon, batch size. Deletes up to a batch of jobs created
 * at or before the horizon; returns how many ids it looked at, then
 * id, owner, "1" when it was active, for each job deleted.
 */
const EXPIRE = new LuaScript(`${FORGET}
local p = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', p .. 'jobs:created', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {#ids}
for _, id in ipairs(ids) do
  local j = redis.call('HMGET', p .. 'job:' .. id, 'owner', 'backend', 'state', 'member')
  forget(p, id, j[1], j[2], j[4])
  if j[1] then
    out[#out + 1] = id
    out[#out + 1] = j[1]
    out[#out + 1] = isActive(j[3]) and '1' or '0'
  end
end
return out
`);

/**
 * ARGV: prefix, backend, horizon, node, run. Claims the oldest pending job of
 * the backend created after the horizon: {id, owner, model, request, createdAt, attempts}, or nil.
 */
const CLAIM = new LuaScript(`
local p, backend = ARGV[1], ARGV[2]
local pending = p .. 'jobs:pending:' .. backend
while true do
  local first = redis.call('ZRANGEBYSCORE', pending, '(' .. ARGV[3], '+inf', 'LIMIT', 0, 1)[1]
  if not first then
    if redis.call('ZCARD', pending) == 0 then redis.call('SREM', p .. 'jobs:backends', backend) end
    return false
  end
  redis.call('ZREM', pending, first)
  local id = string.sub(first, 18)
  local key = p .. 'job:' .. id
  if redis.call('HGET', key, 'state') == 'pending' then
    local attempts = redis.call('HINCRBY', key, 'attempts', 1)
    redis.call('HSET', key, 'state', 'running', 'node', ARGV[4], 'run', ARGV[5])
    redis.call('SADD', p .. 'jobs:running', id)
    local j = redis.call('HMGET', key, 'owner', 'model', 'request', 'createdAt')
    return {id, j[1], j[2], j[3], j[4], attempts}
  end
end
`);

/** ARGV: prefix, id, state, status, result, node, run. 1 when the job was running under this claim. */
const FINISH = new LuaScript(`
local p, id = ARGV[1], ARGV[2]
local key = p .. 'job:' .. id
local j = redis.call('HMGET', key, 'state', 'node', 'run', 'owner')
if j[1] ~= 'running' or j[2] ~= ARGV[6] or j[3] ~= ARGV[7] then return 0 end
redis.call('HSET', key, 'state', ARGV[3], 'status', ARGV[4], 'result', ARGV[5])
redis.call('HDEL', key, 'node', 'run')
redis.call('SREM', p .. 'jobs:running', id)
redis.call('SREM', p .. 'jobs:active:' .. j[4], id)
return 1
`);

/** Puts a running job back in its backend's queue. */
const REQUEUE = `
local function requeue(p, id, backend, member, createdAt)
  local key = p .. 'job:' .. id
  redis.call('HSET', key, 'state', 'pending')
  redis.call('HDEL', key, 'node', 'run')
  redis.call('SREM', p .. 'jobs:running', id)
  redis.call('ZADD', p .. 'jobs:pending:' .. backend, createdAt, member)
  redis.call('SADD', p .. 'jobs:backends', backend)
end
`;

/** ARGV: prefix, id, node, run. Back to pending, the attempt not counted, when it runs under this claim. */
const RELEASE = new LuaScript(`${REQUEUE}
local p, id = ARGV[1], ARGV[2]
local key = p .. 'job:' .. id
local j = redis.call('HMGET', key, 'state', 'node', 'run', 'backend', 'member', 'createdAt', 'attempts')
if j[1] ~= 'running' or j[2] ~= ARGV[3] or j[3] ~= ARGV[4] then return 0 end
redis.call('HSET', key, 'attempts', math.max(tonumber(j[7]) - 1, 0))
requeue(p, id, j[4], j[5], j[6])
return 1
`);

/**
 * ARGV: prefix, max attempts, failure body, node, run. Running jobs whose
 * claim is dead go back to pending, or fail with the body (500) once started
 * `max attempts` times. Returns how many went back to pending.
 */
const RECOVER = new LuaScript(`${REQUEUE}
local p, max, node, run = ARGV[1], tonumber(ARGV[2]), ARGV[4], ARGV[5]
local running = p .. 'jobs:running'
local back = 0
for _, id in ipairs(redis.call('SMEMBERS', running)) do
  local key = p .. 'job:' .. id
  local j = redis.call('HMGET', key, 'state', 'node', 'run', 'attempts', 'owner', 'backend', 'member', 'createdAt')
  if j[1] ~= 'running' then
    redis.call('SREM', running, id)
  else
    local dead
    if not j[2] then dead = true
    elseif j[2] == node then dead = j[3] ~= run
    else dead = redis.call('EXISTS', p .. 'node:' .. j[2]) == 0 end
    if dead then
      if tonumber(j[4]) >= max then
        redis.call('HSET', key, 'state', 'failed', 'status', 500, 'result', ARGV[3])
        redis.call('HDEL', key, 'node', 'run')
        redis.call('SREM', running, id)
        redis.call('SREM', p .. 'jobs:active:' .. j[5], id)
      else
        requeue(p, id, j[6], j[7], j[8])
        back = back + 1
      end
    end
  end
end
return back
`);

/** ARGV: prefix. Backends whose queue has jobs; the others leave the set. */
const PENDING_BACKENDS = new LuaScript(`
local set = ARGV[1] .. 'jobs:backends'
local out = {}
for _, backend in ipairs(redis.call('SMEMBERS', set)) do
  if redis.call('ZCARD', ARGV[1] .. 'jobs:pending:' .. backend) > 0 then out[#out + 1] = backend
  else redis.call('SREM', set, backend) end
end
return out
`);

const ACTIVE: ReadonlySet<string> = new Set(["pending", "running"]);

function list(reply: Reply): Reply[] {
  return Array.isArray(reply) ? reply : [];
}

export class RedisJobStore implements JobStore {
  readonly #redis: RedisConnection;
  readonly #nodeId: string;
  readonly #run: string;
  readonly #clock: () => number;
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: { nodeId: string; run: string; clock: () => number; ttlMs: number }) {
    this.#redis = redis;
    this.#nodeId = options.nodeId;
    this.#run = options.run;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
  }

  /** Jobs created at or before this are expired. */
  #horizon(): number {
    return this.#clock() - this.#ttlMs;
  }

  async recover(maxAttempts: number, body: unknown): Promise<number> {
    return Number(await this.#redis.eval(RECOVER, [], [PREFIX, maxAttempts, JSON.stringify(body), this.#nodeId, this.#run]));
  }

  async pendingBackends(): Promise<string[]> {
    return list(await this.#redis.eval(PENDING_BACKENDS, [], [PREFIX])).map(String);
  }

  async insert(owner: string, backend: string, model: string, request: unknown, maxActive: number): Promise<string | undefined> {
    const id = randomUUID();
    const max = Number.isFinite(maxActive) ? maxActive : Number.MAX_SAFE_INTEGER;
    const expiryMs = Math.max(1, Math.ceil(this.#ttlMs + DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS));
    const args = [PREFIX, id, owner, backend, model, JSON.stringify(request), this.#clock(), max, expiryMs];
    return (await this.#redis.eval(INSERT, [], args)) === 1 ? id : undefined;
  }

  async take(owner: string, id: string): Promise<Retrieval> {
    const [kind, status, result] = list(await this.#redis.eval(TAKE, [], [PREFIX, id, owner, this.#horizon()]));
    if (kind === "pending") return { kind: "pending" };
    if (kind !== "ready") return { kind: "gone" };
    return { kind: "ready", status: Number(status), body: JSON.parse(String(result)) };
  }

  async state(owner: string, id: string): Promise<JobState | undefined> {
    const [jobOwner, state, createdAt] = list(await this.#redis.command(["HMGET", keys.job(id), "owner", "state", "createdAt"]));
    if (jobOwner !== owner || !(Number(createdAt) > this.#horizon())) return undefined;
    return state as JobState;
  }

  async delete(owner: string, id: string): Promise<Removed | undefined> {
    const state = await this.#redis.eval(DELETE, [], [PREFIX, id, owner, this.#horizon()]);
    if (typeof state !== "string") return undefined;
    return { id, owner, active: ACTIVE.has(state) };
  }

  async expire(): Promise<Removed[]> {
    const removed: Removed[] = [];
    const horizon = this.#horizon();
    for (;;) {
      const [looked, ...rows] = list(await this.#redis.eval(EXPIRE, [], [PREFIX, horizon, DEFAULT_STORE_EXPIRE_BATCH]));
      for (let i = 0; i + 2 < rows.length; i += 3) removed.push({ id: String(rows[i]), owner: String(rows[i + 1]), active: rows[i + 2] === "1" });
      if (Number(looked) < DEFAULT_STORE_EXPIRE_BATCH) return removed;
    }
  }

  async claim(backend: string): Promise<Job | undefined> {
    const claimed = await this.#redis.eval(CLAIM, [], [PREFIX, backend, this.#horizon(), this.#nodeId, this.#run]);
    if (!Array.isArray(claimed)) return undefined;
    const [id, owner, model, request, createdAt, attempts] = claimed;
    return {
      id: String(id),
      owner: String(owner),
      backend,
      model: String(model),
      request: String(request),
      createdAt: Number(createdAt),
      attempts: Number(attempts),
    };
  }

  async finish(id: string, state: "done" | "failed", status: number, body: unknown): Promise<boolean> {
    const args = [PREFIX, id, state, status, JSON.stringify(body), this.#nodeId, this.#run];
    return (await this.#redis.eval(FINISH, [], args)) === 1;
  }

  async release(id: string): Promise<void> {
    await this.#redis.eval(RELEASE, [], [PREFIX, id, this.#nodeId, this.#run]);
  }
}
