// Paired devices in Redis: digests of their tokens (base64), never the
// tokens. One hash of id → device, one of id → last use, which every node
// writes often and which therefore never rewrites the device itself, and one
// of id → Web Push subscription, deleted with the device.
import type { DeviceStore, StoredDevice, StoredPush } from "../shared-store.ts";
import { LuaScript, type RedisConnection, type Reply } from "./connection.ts";
import { keys } from "./keys.ts";

interface Stored {
  id: string;
  label: string;
  /** Base64 of the token's digest. */
  digest: string;
  createdAt: number;
}

/** KEYS: devices, last uses, subscriptions. ARGV: id, device as JSON, max. 1 when added, 0 when `max` are paired already. */
const INSERT = new LuaScript(`
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`);

/** KEYS: devices, subscriptions. ARGV: id, subscription ('' removes it). 1 when written, 0 when the device is not paired. */
const SET_PUSH = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == '' then redis.call('HDEL', KEYS[2], ARGV[1]) else redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return 1
`);

/** KEYS: subscriptions. ARGV: id, subscription. Removes it only if it is still that one. */
const DROP_PUSH = new LuaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`);

/** KEYS: devices, last uses. ARGV: id, time. A device revoked meanwhile gets no last use. */
const TOUCH = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return 1
`);

/** HGETALL's flat reply as pairs. */
function pairs(reply: Reply | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (!Array.isArray(reply)) return map;
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  return map;
}

export class RedisDeviceStore implements DeviceStore {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  async all(): Promise<StoredDevice[]> {
    const [devices, used] = await this.#redis.transaction([
      ["HGETALL", keys.devices],
      ["HGETALL", keys.devicesUsed],
    ]);
    const lastUse = pairs(used);
    const all = [...pairs(devices).values()].map((json) => {
      const stored = JSON.parse(json) as Stored;
      const device: StoredDevice = { id: stored.id, label: stored.label, digest: Buffer.from(stored.digest, "base64"), createdAt: stored.createdAt };
      const at = lastUse.get(stored.id);
      if (at !== undefined) device.lastUsedAt = Number(at);
      return device;
    });
    return all.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  async insert(device: StoredDevice, max: number): Promise<boolean> {
    const stored: Stored = { id: device.id, label: device.label, digest: device.digest.toString("base64"), createdAt: device.createdAt };
    const limit = Number.isFinite(max) ? max : Number.MAX_SAFE_INTEGER;
    return (await this.#redis.eval(INSERT, [keys.devices, keys.devicesUsed, keys.devicesPush], [device.id, JSON.stringify(stored), limit])) === 1;
  }

  async delete(id: string): Promise<boolean> {
    const [deleted] = await this.#redis.transaction([
      ["HDEL", keys.devices, id],
      ["HDEL", keys.devicesUsed, id],
      ["HDEL", keys.devicesPush, id],
    ]);
    return deleted === 1;
  }

  async touch(id: string, at: number): Promise<void> {
    await this.#redis.eval(TOUCH, [keys.devices, keys.devicesUsed], [id, at]);
  }

  async setPush(id: string, subscription: string | undefined): Promise<boolean> {
    return (await this.#redis.eval(SET_PUSH, [keys.devices, keys.devicesPush], [id, subscription ?? ""])) === 1;
  }

  async dropPush(id: string, subscription: string): Promise<void> {
    await this.#redis.eval(DROP_PUSH, [keys.devicesPush], [id, subscription]);
  }

  async pushes(): Promise<StoredPush[]> {
    const all = pairs(await this.#redis.command(["HGETALL", keys.devicesPush]));
    return [...all].map(([deviceId, subscription]) => ({ deviceId, subscription })).sort((a, b) => (a.deviceId < b.deviceId ? -1 : 1));
  }
}
