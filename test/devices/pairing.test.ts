// Paired devices and the person behind every token, with a real server
// (`serve` on port 0, the fixture agent over stdio), real WebSocket and HTTP
// clients: a device's token works on /acp and /v1 for the server's person;
// revoking it refuses it at once and closes its connections, while the
// person's sessions stay; rotating the access token orphans nothing.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DeviceRegistry, tokenDigest } from "../../sidecar/devices/device-registry.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { openStore, STORE_FILE } from "../../sidecar/store/store.ts";
import { SqliteDeviceStore } from "../../sidecar/store/sqlite/devices.ts";
import { call, openWs, serveFixture } from "../helpers/device-server.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const MAIN = "main-token-0123456789abcdef";
const ROTATED = "rotated-token-0123456789abcdef";



/** A WebSocket ACP connection with `token`, initialized. */
async function initialized(url: string, token: string): Promise<WsTestClient> {
  const client = await openWs(url, token);
  const init = await call(client, 0, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  assert.ok("result" in init, JSON.stringify(init));
  return client;
}

const status = async (url: string, token: string): Promise<number> => {
  const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
};

describe("paired devices: one person, a token each", () => {
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-devices-"));
    server = await serveFixture(dir, MAIN);
  });

  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a device's token works on /v1 and /acp as the server's person; its last use is recorded", async () => {
    const { device, token } = await server.devices.pair("Phone");
    assert.equal(device.label, "Phone");
    assert.equal(device.lastUsedAt, undefined);
    assert.equal(await status(server.url, token), 200);
    const phone = await initialized(server.url, token);
    const created = await call(phone, 1, "session/new", { cwd: dir, mcpServers: [] });
    const sessionId = (created["result"] as { sessionId: string }).sessionId;
    // The same person: the main token lists the phone's session.
    const laptop = await initialized(server.url, MAIN);
    const listed = await call(laptop, 1, "session/list", {});
    assert.ok((listed["result"] as { sessions: Array<{ sessionId: string }> }).sessions.some((s) => s.sessionId === sessionId));
    assert.equal(typeof server.devices.list().find((d) => d.deviceId === device.deviceId)?.lastUsedAt, "number");
    await phone.close();
    await laptop.close();
  });

  test("revoke: the token is refused at once, its WebSocket is closed, and the person's session stays loadable", async () => {
    const { device, token } = await server.devices.pair("Tablet");
    const tablet = await initialized(server.url, token);
    const created = await call(tablet, 1, "session/new", { cwd: dir, mcpServers: [] });
    const sessionId = (created["result"] as { sessionId: string }).sessionId;
    await call(tablet, 2, "session/prompt", { sessionId, prompt: [{ type: "text", text: "echo before the revoke" }] });

    await server.devices.revoke(device.deviceId);
    const closed = await tablet.closed;
    assert.ok(closed.code >= 1000, `closed with ${closed.code}`);
    assert.equal(await status(server.url, token), 401);
    const again = await WsTestClient.open(`${server.url}/acp`, { protocols: [`acp.bearer.${token}`] });
    assert.ok(isRefusal(again) && again.status === 401, "a new WebSocket with the revoked token is refused");
    assert.equal(server.devices.list().some((d) => d.deviceId === device.deviceId), false);

    const laptop = await initialized(server.url, MAIN);
    const loaded = await call(laptop, 1, "session/load", { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(loaded["error"], undefined, JSON.stringify(loaded["error"]));
    await assert.rejects(server.devices.revoke(device.deviceId), /unknown device/);
    await laptop.close();
  });

  test("rotating the access token keeps the person: sessions and deferred jobs stay theirs; the old token is refused", async () => {
    const before = await initialized(server.url, MAIN);
    const created = await call(before, 1, "session/new", { cwd: dir, mcpServers: [] });
    const sessionId = (created["result"] as { sessionId: string }).sessionId;
    await before.close();
    const submitted = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${MAIN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fixture", deferred: true, messages: [{ role: "user", content: "echo kept" }] }),
    });
    const { request_id: requestId } = (await submitted.json()) as { request_id: string };

    server.auth.setTokens([ROTATED]);
    assert.equal(await status(server.url, MAIN), 401);
    const after = await initialized(server.url, ROTATED);
    const listed = await call(after, 1, "session/list", {});
    assert.ok((listed["result"] as { sessions: Array<{ sessionId: string }> }).sessions.some((s) => s.sessionId === sessionId));
    const loaded = await call(after, 2, "session/load", { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(loaded["error"], undefined, `the session loads with the new token: ${JSON.stringify(loaded["error"])}`);
    let result: Response;
    do {
      result = await fetch(`${server.url}/v1/chat/deferred-completion/${requestId}`, { headers: { authorization: `Bearer ${ROTATED}` } });
      if (result.status === 202) await result.arrayBuffer();
    } while (result.status === 202);
    assert.equal(result.status, 200, "the job is the person's, fetched with the new token");
    const completion = (await result.json()) as { choices: Array<{ message: { content: string } }> };
    assert.equal(completion.choices[0]?.message.content, "kept");
    await after.close();
    server.auth.setTokens([MAIN]);
  });

  test("only a digest of a device token is stored", async () => {
    const { token } = await server.devices.pair("Watch");
    const bytes = readFileSync(join(dir, STORE_FILE));
    const wal = (() => {
      try {
        return readFileSync(join(dir, `${STORE_FILE}-wal`));
      } catch {
        return Buffer.alloc(0);
      }
    })();
    assert.equal(bytes.includes(token), false);
    assert.equal(wal.includes(token), false);
  });
});

describe("device registry limits", () => {
  test("at most the cap of devices; a label is trimmed and bounded", async () => {
    const store = openStore(":memory:");
    const registry = await DeviceRegistry.open(new SqliteDeviceStore(store), { maxDevices: 2 });
    assert.equal((await registry.pair("  Phone  ")).device.label, "Phone");
    assert.equal((await registry.pair("x".repeat(500))).device.label.length, 64);
    await assert.rejects(registry.pair("Third"), /at most 2 devices/);
    store.close();
  });

  test("devices survive a reopen of the store; their tokens still work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-remote-devices-reopen-"));
    try {
      const file = join(dir, STORE_FILE);
      const first = openStore(file);
      const { device, token } = await (await DeviceRegistry.open(new SqliteDeviceStore(first))).pair("Phone");
      first.close();
      const second = openStore(file);
      const registry = await DeviceRegistry.open(new SqliteDeviceStore(second));
      assert.deepEqual(registry.list().map((d) => d.deviceId), [device.deviceId]);
      assert.equal(registry.authenticate(tokenDigest(token)), device.deviceId);
      second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
