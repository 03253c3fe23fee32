// Rows of the Redis store alone: what it does while Redis is gone, silent or
// restarting, what survives a crash of Redis (the append-only file), and how
// its keys look to whoever shares the Redis.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { redactedUrl } from "../../sidecar/store/redis/connection.ts";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";
import { DEFAULT_STORE_JOURNAL_TTL_MS, DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS, DEFAULT_STORE_RATE_IDLE_MS, DEFAULT_STORE_RETRY_AFTER_S } from "../../sidecar/store/limits.ts";
import { StoreUnavailableError, type SharedStore, type StoreEvent } from "../../sidecar/store/shared-store.ts";
import { freePort } from "../helpers/managed-process.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { ManualClock, rawClient, until } from "./harness.ts";
import { record } from "./rows-sessions.ts";

const TTL_MS = 24 * 60 * 60_000;
/** Redis restarts and the store reconnects (backoff up to DEFAULT_STORE_RECONNECT_MAX_MS) well within this, in milliseconds. */
const BACK_WITHIN_MS = 15_000;

const installed = redisServerPath() !== undefined;
if (!installed) console.log("# redis store: skipped: redis-server is not installed (CI installs it)");

/** Every family of the store, one call each: all must fail the same way while Redis is away. */
function oneCallOfEach(store: SharedStore): Array<[string, () => Promise<unknown>]> {
  const jobs = store.jobs({ clock: Date.now, ttlMs: TTL_MS });
  return [
    ["sessions.get", () => store.sessions.get("s1")],
    ["sessions.writeJournal", () => store.sessions.writeJournal([{ sessionId: "s1", append: ["e"] }], { maxEntries: 10, maxBytes: 1_000 })],
    ["sessions.claimHome", () => store.sessions.claimHome("s1", store.nodeId, undefined)],
    ["jobs.insert", () => jobs.insert("person-1", "backend-1", "demo", {}, 10)],
    ["jobs.take", () => jobs.take("person-1", "id")],
    ["rates.take", () => store.rates().take("person-1", 60)],
    ["devices.all", () => store.devices.all()],
    ["nodes.alive", () => store.nodes.alive()],
    ["nodes.publish", () => store.nodes.publish({ kind: "jobs-pending" })],
  ];
}

async function assertUnavailableFast(store: SharedStore, withinMs: number): Promise<void> {
  for (const [name, call] of oneCallOfEach(store)) {
    const started = Date.now();
    await assert.rejects(call(), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError, `${name}: ${String(error)}`);
      assert.equal(error.retryAfterSeconds, DEFAULT_STORE_RETRY_AFTER_S);
      return true;
    });
    assert.ok(Date.now() - started < withinMs, `${name} failed after ${Date.now() - started} ms`);
  }
}

describe("redis store", { skip: installed ? false : "redis-server is not installed" }, () => {
  let server: RedisServer;
  const opened: SharedStore[] = [];
  const open = async (nodeId: string, url = server.url, extra: { commandTimeoutMs?: number; log?: (line: string) => void } = {}): Promise<SharedStore> => {
    const store = await openRedisStore(url, { nodeId, ca: server.ca, ...extra });
    opened.push(store);
    return store;
  };

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await server.close();
  });

  test("stop redis: available() turns false (onAvailability says so) and every call rejects with StoreUnavailableError within 1 s", async () => {
    const store = await open("node-a");
    const seen: boolean[] = [];
    store.onAvailability((available) => seen.push(available));
    assert.equal(store.available(), true);
    try {
      await server.kill();
      await until(() => !store.available(), "available() to turn false");
      assert.deepEqual(seen, [false]);
      await assertUnavailableFast(store, 1_000);
    } finally {
      if (!server.running) await server.start();
    }
  });

  test("restart redis on the same port and folder: available() is true again by itself, and events flow again", async () => {
    const lines: string[] = [];
    const store = await open("node-a", server.url, { log: (line) => lines.push(line) });
    assert.deepEqual(lines, [], "nothing to say at a start that reached Redis");
    const seen: boolean[] = [];
    store.onAvailability((available) => seen.push(available));
    const events: StoreEvent[] = [];
    store.nodes.subscribe((event) => events.push(event));
    await server.kill();
    await until(() => !store.available(), "available() to turn false");
    await server.start();
    await until(() => store.available(), "available() to come back", BACK_WITHIN_MS);
    assert.deepEqual(seen, [false, true]);
    assert.deepEqual(lines, [
      `store: Redis at ${redactedUrl(server.url)} cannot be reached; reconnecting`,
      `store: Redis at ${redactedUrl(server.url)} is reachable again`,
    ]);
    await store.sessions.save(record("s1"));
    assert.deepEqual(await store.sessions.get("s1"), record("s1"));
    // The subscriber reconnects on its own schedule: publish until it has subscribed again.
    const other = await open("node-b");
    await until(
      async () => {
        await other.nodes.publish({ kind: "devices-changed" });
        return events.length > 0;
      },
      "an event published after the restart to reach the subscriber",
      BACK_WITHIN_MS,
    );
    assert.deepEqual(events[0], { kind: "devices-changed" });
  });

  test("AOF: what was written before redis was killed is there after it restarts", async () => {
    const store = await open("node-a");
    const clock = new ManualClock();
    const jobs = store.jobs({ clock: clock.read, ttlMs: TTL_MS });
    await store.sessions.save(record("s-aof"));
    assert.equal(await store.sessions.claimHome("s-aof", store.nodeId, undefined), true);
    await store.sessions.writeJournal([{ sessionId: "s-aof", append: ["one", "two"] }], { maxEntries: 10, maxBytes: 1_000 });
    const id = (await jobs.insert("person-1", "backend-aof", "demo", { q: 1 }, 10))!;
    await jobs.claim("backend-aof");
    await jobs.finish(id, "done", 200, { answer: 42 });
    const digest = Buffer.alloc(32, 7);
    await store.devices.insert({ id: "d-aof", label: "Phone", digest, createdAt: 5 }, 10);

    await server.kill();
    await server.start();
    await until(() => store.available(), "available() to come back", BACK_WITHIN_MS);
    const fresh = await open("node-b");
    assert.deepEqual(await fresh.sessions.get("s-aof"), record("s-aof"));
    assert.equal(await fresh.sessions.home("s-aof"), store.nodeId);
    assert.deepEqual(await fresh.sessions.journal("s-aof"), ["one", "two"]);
    assert.deepEqual(await fresh.jobs({ clock: clock.read, ttlMs: TTL_MS }).take("person-1", id), { kind: "ready", status: 200, body: { answer: 42 } });
    assert.deepEqual(await fresh.devices.all(), [{ id: "d-aof", label: "Phone", digest, createdAt: 5 }]);
  });

  test("a redis that stops answering (its network gone silent) fails a call with StoreUnavailableError after the command timeout, and the store recovers once the connection is cut", async () => {
    const proxy = await startTcpProxy(server.port);
    try {
      const store = await open("node-a", `rediss://:${server.password}@127.0.0.1:${proxy.port}/0`, { commandTimeoutMs: 300 });
      await store.sessions.save(record("s1"));
      proxy.freeze();
      const started = Date.now();
      await assert.rejects(store.sessions.get("s1"), StoreUnavailableError);
      const waited = Date.now() - started;
      assert.ok(waited >= 250 && waited < 1_000, `failed after ${waited} ms`);
      proxy.cut();
      await until(async () => (await store.sessions.get("s1").catch(() => undefined)) !== undefined, "the store to answer again", BACK_WITHIN_MS);
      assert.equal(store.available(), true);
    } finally {
      await proxy.close();
    }
  });

  test("openRedisStore rejects with a clear error, without the password, when redis cannot be reached at start", async () => {
    const port = await freePort();
    const started = Date.now();
    await assert.rejects(openRedisStore(`redis://user:s3cret@127.0.0.1:${port}/0`, { nodeId: "node-a", startTimeoutMs: 300 }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, new RegExp(`cannot reach the Redis store at redis://127\\.0\\.0\\.1:${port}/0`));
      assert.match(error.message, /ECONNREFUSED/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    assert.ok(Date.now() - started < 5_000);
  });

  test("close: available() is false and calls reject with StoreUnavailableError", async () => {
    const store = await openRedisStore(server.url, { nodeId: "node-a", ca: server.ca });
    await store.close();
    assert.equal(store.available(), false);
    await assertUnavailableFast(store, 1_000);
    await store.close();
  });

  test("keys: every key is under acp-remote:, and those that expire carry their TTL", async () => {
    const raw = await rawClient(server.url, server.ca);
    try {
      await raw.sendCommand(["FLUSHALL"]);
      await raw.sendCommand(["SET", "other-app:key", "kept"]);
      const store = await open("node-a");
      await store.sessions.save(record("s1"));
      await store.sessions.writeJournal([{ sessionId: "s1", append: ["one"] }], { maxEntries: 10, maxBytes: 1_000 });
      const id = (await store.jobs({ clock: Date.now, ttlMs: TTL_MS }).insert("person-1", "backend-1", "demo", {}, 10))!;
      await store.rates().take("person-1", 60);
      await store.devices.insert({ id: "d1", label: "Phone", digest: Buffer.alloc(32), createdAt: 1 }, 10);
      await store.nodes.heartbeat({ id: "node-a", url: "", startedAt: 1 }, 5_000);

      const all = (await raw.sendCommand(["KEYS", "*"])) as string[];
      assert.deepEqual(all.filter((k) => !k.startsWith("acp-remote:")), ["other-app:key"]);
      const pttl = async (key: string): Promise<number> => Number(await raw.sendCommand(["PTTL", key]));
      const journal = await pttl("acp-remote:journal:s1");
      assert.ok(journal > DEFAULT_STORE_JOURNAL_TTL_MS - 60_000 && journal <= DEFAULT_STORE_JOURNAL_TTL_MS, `journal ${journal}`);
      assert.ok((await pttl("acp-remote:journal-bytes:s1")) > DEFAULT_STORE_JOURNAL_TTL_MS - 60_000);
      const job = await pttl(`acp-remote:job:${id}`);
      assert.ok(job > TTL_MS && job <= TTL_MS + DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS, `job ${job}`);
      const rate = await pttl("acp-remote:rate:person-1");
      assert.ok(rate > 0 && rate <= DEFAULT_STORE_RATE_IDLE_MS, `rate ${rate}`);
      const node = await pttl("acp-remote:node:node-a");
      assert.ok(node > 0 && node <= 5_000, `node ${node}`);
      for (const key of ["acp-remote:session:s1", "acp-remote:devices"]) assert.equal(await pttl(key), -1, `${key} does not expire`);
    } finally {
      raw.destroy();
    }
  });

  test("a job the store expired by itself (no node swept) frees its owner's place and is skipped by claim and sweep", async () => {
    const raw = await rawClient(server.url, server.ca);
    try {
      await raw.sendCommand(["FLUSHALL"]);
      const clock = new ManualClock();
      const jobs = (await open("node-a")).jobs({ clock: clock.read, ttlMs: TTL_MS });
      const gone = (await jobs.insert("person-1", "backend-1", "demo", {}, 1))!;
      await raw.sendCommand(["DEL", `acp-remote:job:${gone}`]);
      clock.advance(1);
      const next = await jobs.insert("person-1", "backend-1", "demo", {}, 1);
      assert.ok(next, "the place of the vanished job is free again");
      assert.equal((await jobs.claim("backend-1"))?.id, next);
      assert.deepEqual(await jobs.take("person-1", gone), { kind: "gone" });
      clock.advance(TTL_MS);
      assert.deepEqual(await jobs.expire(), [{ id: next, owner: "person-1", active: true }], "the vanished job is not reported");
      assert.deepEqual(await raw.sendCommand(["ZCARD", "acp-remote:jobs:created"]), 0);
    } finally {
      raw.destroy();
    }
  });

  test("a journal whose byte counter was lost is counted again from its entries", async () => {
    const raw = await rawClient(server.url, server.ca);
    try {
      const store = await open("node-a");
      await store.sessions.writeJournal([{ sessionId: "s-count", append: ["aaaa", "bbbb"] }], { maxEntries: 100, maxBytes: 10 });
      await raw.sendCommand(["DEL", "acp-remote:journal-bytes:s-count"]);
      await store.sessions.writeJournal([{ sessionId: "s-count", append: ["cccc"] }], { maxEntries: 100, maxBytes: 10 });
      assert.deepEqual(await store.sessions.journal("s-count"), ["bbbb", "cccc"]);
      assert.equal(await raw.sendCommand(["GET", "acp-remote:journal-bytes:s-count"]), "8");
    } finally {
      raw.destroy();
    }
  });
});
