// The session directory, the homes and the journals in Redis. A session is a
// hash (its record, and its home: the node that runs its agent); its journal
// a list with a byte counter beside it, both trimmed and expired together by
// one script, so that the bounds hold whichever node writes.
import type { JournalBounds, JournalWrite, SessionRecord, SessionStore } from "../shared-store.ts";
import { DEFAULT_STORE_JOURNAL_TTL_MS } from "../limits.ts";
import { LuaScript, type RedisConnection, type Reply } from "./connection.ts";
import { keys, PREFIX } from "./keys.ts";

/**
 * Every record in one step. An id whose record is gone (a delete that
 * raced the listing) is skipped.
 * KEYS: sessions set. ARGV: prefix.
 */
const ALL = new LuaScript(`
local records = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local record = redis.call('HGET', ARGV[1] .. 'session:' .. id, 'record')
  if record then records[#records + 1] = record end
end
return records
`);

/**
 * A new session's record, unless one of that id is stored already.
 * KEYS: session hash, sessions set. ARGV: record, id.
 */
const CREATE = new LuaScript(`
if redis.call('HSETNX', KEYS[1], 'record', ARGV[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[2])
return 1
`);

/**
 * A record written through, unless the stored one is another person's.
 * KEYS: session hash, sessions set. ARGV: record, id, owner id.
 */
const SAVE = new LuaScript(`
local stored = redis.call('HGET', KEYS[1], 'record')
if stored and cjson.decode(stored)['ownerId'] ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
`);

/**
 * The compare-and-set of a session's home. A session the store does not
 * know has no home to claim (false), so a claim racing a delete leaves nothing behind.
 * KEYS: session hash. ARGV: node, "1" when a home is expected, the expected home.
 */
const CLAIM_HOME = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], 'record') == 0 then return 0 end
local home = redis.call('HGET', KEYS[1], 'home')
if ARGV[2] == '1' then
  if home ~= ARGV[3] then return 0 end
elseif home then
  return 0
end
redis.call('HSET', KEYS[1], 'home', ARGV[1])
return 1
`);

/** KEYS: session hash. ARGV: node. */
const RELEASE_HOME = new LuaScript(`
if redis.call('HGET', KEYS[1], 'home') == ARGV[1] then redis.call('HDEL', KEYS[1], 'home') end
return 1
`);

/**
 * Writes several journals, each trimmed to its bounds: the oldest entries go
 * first, the newest always stays. The byte counter is counted again from the
 * list when it is missing (so a counter lost by an eviction heals itself).
 * Both keys expire after the TTL, refreshed by every write.
 * KEYS: journal list and byte counter of each write, in pairs.
 * ARGV: max entries, max bytes, TTL in ms, then per write: how many of the
 *       newest entries go first, "1" when the last entry is rewritten, its new
 *       text, the number of new entries, the new entries.
 */
const WRITE_JOURNAL = new LuaScript(`
local maxEntries, maxBytes, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local a = 4
for w = 1, #KEYS, 2 do
  local list, counter = KEYS[w], KEYS[w + 1]
  local drop, replace, text, n = tonumber(ARGV[a]), ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  a = a + 4
  local count = redis.call('LLEN', list)
  local bytes = tonumber(redis.call('GET', counter))
  if count == 0 then
    bytes = 0
  elseif not bytes then
    bytes = 0
    for _, entry in ipairs(redis.call('LRANGE', list, 0, -1)) do bytes = bytes + #entry end
  end
  while drop > 0 and count > 0 do
    bytes = bytes - #redis.call('RPOP', list)
    count = count - 1
    drop = drop - 1
  end
  if replace == '1' and count > 0 then
    bytes = bytes + #text - #redis.call('LINDEX', list, -1)
    redis.call('LSET', list, -1, text)
  end
  for i = 0, n - 1 do
    local entry = ARGV[a + i]
    redis.call('RPUSH', list, entry)
    bytes = bytes + #entry
  end
  a = a + n
  count = count + n
  while count > 1 and (count > maxEntries or bytes > maxBytes) do
    bytes = bytes - #redis.call('LPOP', list)
    count = count - 1
  end
  if count > 0 then
    redis.call('SET', counter, bytes, 'PX', ttl)
    redis.call('PEXPIRE', list, ttl)
  else
    redis.call('DEL', counter)
  end
end
return 1
`);

function strings(reply: Reply): string[] {
  return Array.isArray(reply) ? reply.filter((r): r is string => typeof r === "string") : [];
}

export class RedisSessionStore implements SessionStore {
  readonly #redis: RedisConnection;
  readonly #journalTtlMs: number;

  constructor(redis: RedisConnection, options: { journalTtlMs?: number } = {}) {
    this.#redis = redis;
    this.#journalTtlMs = options.journalTtlMs ?? DEFAULT_STORE_JOURNAL_TTL_MS;
  }

  async create(record: SessionRecord): Promise<boolean> {
    return (await this.#redis.eval(CREATE, [keys.session(record.id), keys.sessions], [JSON.stringify(record), record.id])) === 1;
  }

  async save(record: SessionRecord): Promise<boolean> {
    return (await this.#redis.eval(SAVE, [keys.session(record.id), keys.sessions], [JSON.stringify(record), record.id, record.ownerId])) === 1;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const record = await this.#redis.command(["HGET", keys.session(id), "record"]);
    return typeof record === "string" ? (JSON.parse(record) as SessionRecord) : undefined;
  }

  async all(): Promise<SessionRecord[]> {
    return strings(await this.#redis.eval(ALL, [keys.sessions], [PREFIX])).map((r) => JSON.parse(r) as SessionRecord);
  }

  async delete(id: string): Promise<void> {
    await this.#redis.transaction([
      ["DEL", keys.session(id), keys.journal(id), keys.journalBytes(id)],
      ["SREM", keys.sessions, id],
    ]);
  }

  async writeJournal(writes: JournalWrite[], bounds: JournalBounds): Promise<void> {
    if (writes.length === 0) return;
    const journalKeys: string[] = [];
    const args: Array<string | number> = [bounds.maxEntries, bounds.maxBytes, Math.max(1, Math.ceil(this.#journalTtlMs))];
    for (const write of writes) {
      journalKeys.push(keys.journal(write.sessionId), keys.journalBytes(write.sessionId));
      args.push(write.dropLast ?? 0, write.replaceLast === undefined ? "0" : "1", write.replaceLast ?? "", write.append.length, ...write.append);
    }
    await this.#redis.eval(WRITE_JOURNAL, journalKeys, args);
  }

  async journal(id: string): Promise<string[]> {
    return strings(await this.#redis.command(["LRANGE", keys.journal(id), 0, -1]));
  }

  async journalTail(id: string, count: number): Promise<string[]> {
    if (count <= 0) return [];
    return strings(await this.#redis.command(["LRANGE", keys.journal(id), -count, -1]));
  }

  async home(id: string): Promise<string | undefined> {
    const home = await this.#redis.command(["HGET", keys.session(id), "home"]);
    return typeof home === "string" ? home : undefined;
  }

  async claimHome(id: string, node: string, expected: string | undefined): Promise<boolean> {
    const claimed = await this.#redis.eval(CLAIM_HOME, [keys.session(id)], [node, expected === undefined ? "0" : "1", expected ?? ""]);
    return claimed === 1;
  }

  async releaseHome(id: string, node: string): Promise<void> {
    await this.#redis.eval(RELEASE_HOME, [keys.session(id)], [node]);
  }
}
