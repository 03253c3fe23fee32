// The Redis store's layout version (sidecar/store/redis/schema.ts), on a real
// redis-server: a node marks the store with its version; a store from before
// versions were kept is taken as version 1 and keeps its keys; a store a newer
// acp-remote wrote is refused, and not written to.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";
import { REDIS_MIGRATIONS, REDIS_SCHEMA_VERSION } from "../../sidecar/store/redis/schema.ts";
import { StoreVersionError } from "../../sidecar/store/schema-version.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { rawClient } from "./harness.ts";
import { record } from "./rows-sessions.ts";

const SCHEMA_KEY = "acp-remote:schema";
const installed = redisServerPath() !== undefined;
if (!installed) console.log("# redis schema: skipped: redis-server is not installed (CI installs it)");

describe("the Redis store's layout version", { skip: installed ? false : "redis-server is not installed" }, () => {
  let server: RedisServer;
  let raw: Awaited<ReturnType<typeof rawClient>>;
  const opened: SharedStore[] = [];
  const open = async (): Promise<SharedStore> => {
    const store = await openRedisStore(server.url, { nodeId: "node-a", ca: server.ca });
    opened.push(store);
    return store;
  };
  /** Every key with its value as DUMP gives it: what a refused open must leave as it was. */
  const snapshot = async (): Promise<Map<string, string>> => {
    const all = new Map<string, string>();
    for (const key of ((await raw.sendCommand(["KEYS", "*"])) as string[]).sort()) {
      all.set(key, Buffer.from((await raw.sendCommand(["DUMP", key], { typeMapping: { 36: Buffer } })) as unknown as Buffer).toString("base64"));
    }
    return all;
  };

  before(async () => {
    server = await startRedisServer();
    raw = await rawClient(server.url, server.ca);
  });
  beforeEach(async () => {
    await raw.sendCommand(["FLUSHALL"]);
  });
  after(async () => {
    for (const store of opened) await store.close();
    raw?.destroy();
    await server?.close();
  });

  it("the migrations are numbered 1, 2, 3, … in order", () => {
    assert.deepEqual(
      REDIS_MIGRATIONS.map((m) => m.version),
      REDIS_MIGRATIONS.map((_, i) => i + 1),
    );
  });

  it("a node marks an empty store with its version", async () => {
    await open();
    assert.equal(await raw.sendCommand(["GET", SCHEMA_KEY]), String(REDIS_SCHEMA_VERSION));
  });

  it("a store from before versions were kept is version 1: marked, and its sessions are still there", async () => {
    const earlier = await open();
    await earlier.sessions.save(record("s1"));
    await earlier.sessions.writeJournal([{ sessionId: "s1", append: ["one"] }], { maxEntries: 10, maxBytes: 1_000 });
    await raw.sendCommand(["DEL", SCHEMA_KEY]);
    const store = await open();
    assert.equal(await raw.sendCommand(["GET", SCHEMA_KEY]), String(REDIS_SCHEMA_VERSION));
    assert.equal((await store.sessions.get("s1"))?.id, "s1");
    assert.deepEqual(await store.sessions.journal("s1"), ["one"]);
  });

  it("regression: a Redis store of a newer acp-remote was used as it was; a node refuses it, says which versions, and writes nothing", async () => {
    const first = await open();
    await first.sessions.save(record("s1"));
    const newer = REDIS_SCHEMA_VERSION + 1;
    await raw.sendCommand(["SET", SCHEMA_KEY, String(newer)]);
    const before = await snapshot();
    // Should it open after all, it is closed with the others, so that the failure ends the file.
    const opening = openRedisStore(server.url, { nodeId: "node-b", ca: server.ca }).then((store) => {
      opened.push(store);
      return store;
    });
    await assert.rejects(opening, (error: unknown) => {
      assert.ok(error instanceof StoreVersionError, String(error));
      assert.equal(error.found, newer);
      assert.equal(error.known, REDIS_SCHEMA_VERSION);
      assert.match(error.message, new RegExp(`^the Redis store at rediss://127\\.0\\.0\\.1:${server.port}/0 was written by a newer acp-remote: it is at schema version ${newer}, and acp-remote \\S+ knows versions up to ${REDIS_SCHEMA_VERSION}\\. .*every node.*nothing in it was changed\\.$`));
      assert.ok(!error.message.includes(server.password), "the password stays out of the message");
      return true;
    });
    assert.deepEqual(await snapshot(), before);
  });
});
