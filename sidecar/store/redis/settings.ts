// Values the server makes once and every node shares (the key that signs Web
// Push messages), in one hash: the first node to store a value wins, and
// every node reads that one.
import type { SettingStore } from "../shared-store.ts";
import type { RedisConnection } from "./connection.ts";
import { keys } from "./keys.ts";

export class RedisSettingStore implements SettingStore {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.#redis.command(["HGET", keys.settings, key]);
    return typeof value === "string" ? value : undefined;
  }

  async putIfAbsent(key: string, value: string): Promise<string> {
    const [, stored] = await this.#redis.transaction([
      ["HSETNX", keys.settings, key, value],
      ["HGET", keys.settings, key],
    ]);
    return typeof stored === "string" ? stored : value;
  }
}
