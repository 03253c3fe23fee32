// The redis-server the cluster tests run on (deploy/redis.conf): TLS only,
// a password, and what it acknowledged survives a SIGKILL and a SIGTERM
// (append-only file, fsync always); it comes back on the same port, and
// close() leaves no folder behind.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { createClient } from "redis";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";

const skip = redisServerPath() === undefined ? "not installed: redis-server (Debian package redis-server)" : undefined;
if (skip !== undefined) process.stdout.write(`# redis-server tests skipped: ${skip}\n`);

function newClient(redis: RedisServer) {
  return createClient(redis.clientOptions());
}

async function withClient<T>(redis: RedisServer, use: (client: ReturnType<typeof newClient>) => Promise<T>): Promise<T> {
  const client = newClient(redis);
  client.on("error", () => {});
  await client.connect();
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}

describe("test/helpers/redis-server.ts", { skip: skip ?? false }, () => {
  it("runs deploy/redis.conf (TLS only, a password), keeps acknowledged writes across kill() and stop() on the same port, and close() removes its folder", async () => {
    const redis = await startRedisServer();
    try {
      assert.match(redis.url, /^rediss:\/\/:[A-Za-z0-9_-]+@127\.0\.0\.1:\d+\/0$/);
      await withClient(redis, (client) => client.set("before-crash", "kept"));
      await redis.kill();
      assert.equal(redis.running, false);
      await redis.start();
      await withClient(redis, async (client) => {
        assert.equal(await client.get("before-crash"), "kept", "the AOF had it before the SIGKILL");
        await client.set("before-stop", "kept too");
      });
      const exit = await redis.stop();
      assert.equal(exit.code, 0);
      await redis.start();
      await withClient(redis, async (client) => {
        assert.equal(await client.get("before-stop"), "kept too");
        assert.equal(await client.configGet("appendfsync").then((c) => c["appendfsync"]), "always");
        assert.equal(await client.configGet("port").then((c) => c["port"]), "0", "no cleartext port");
      });
      // Without the password, or without TLS, nothing is served.
      const noPassword = createClient({ ...redis.clientOptions(), url: `rediss://127.0.0.1:${redis.port}/0` });
      noPassword.on("error", () => {});
      await noPassword.connect();
      await assert.rejects(noPassword.get("before-stop"), /NOAUTH/);
      noPassword.destroy();
      const cleartext = createClient({ url: `redis://:${redis.password}@127.0.0.1:${redis.port}/0`, socket: { reconnectStrategy: false } });
      cleartext.on("error", () => {});
      await assert.rejects(cleartext.connect());
      cleartext.destroy();
    } finally {
      await redis.close();
    }
    assert.equal(existsSync(redis.dir), false);
    assert.equal(redis.running, false);
  });
});
