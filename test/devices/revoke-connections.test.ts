// What a revoke does to a device's open /acp connections, on a real server
// (`serve` on port 0, the fixture agent): a WebSocket is closed with 1008 and
// the reason, so the client stops retrying with the token; a Streamable HTTP
// connection's event stream ends over h2c and HTTP/1.1 and its next POST gets
// 401. Either way the session it made stays the person's, loadable with the
// main token.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { call, openWs, serveFixture } from "../helpers/device-server.ts";
import { createClient, isSse, jsonOf, type HttpProtocol } from "../helpers/http-clients.ts";

const MAIN = "main-token-revoke-0123456789abcdef";
const JSON_TYPE = { "content-type": "application/json" };
/** A connection the revoke leaves open would hang the test: it fails instead. */
const TEST_TIMEOUT_MS = 20_000;



const initialize = { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };

describe("revoking a device ends its open connections; the person's sessions stay", () => {
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-revoke-"));
    server = await serveFixture(dir, MAIN);
  });

  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The main token loads the session: it survived the revoke and is the person's. */
  async function loadWithMain(sessionId: string): Promise<void> {
    const laptop = await openWs(server.url, MAIN);
    await call(laptop, 0, Acp.agent.initialize, initialize.params);
    const loaded = await call(laptop, 1, Acp.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(loaded["error"], undefined, JSON.stringify(loaded["error"]));
    await laptop.close();
  }

  test("WebSocket: closed with 1008 and the reason; the session stays loadable with the main token", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { device, token } = await server.devices.pair("Phone");
    const phone = await openWs(server.url, token);
    await call(phone, 0, Acp.agent.initialize, initialize.params);
    const created = await call(phone, 1, Acp.agent.session.new, { cwd: dir, mcpServers: [] });
    const sessionId = (created["result"] as { sessionId: string }).sessionId;

    await server.devices.revoke(device.deviceId);
    const closed = await phone.closed;
    assert.equal(closed.code, 1008);
    assert.equal(closed.reason, "the credential was revoked");
    await loadWithMain(sessionId);
  });

  for (const protocol of ["h2c", "http1"] satisfies HttpProtocol[]) {
    test(`Streamable HTTP (${protocol}): the connection's event stream ends, the next POST gets 401; the session stays loadable`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const { device, token } = await server.devices.pair(`Laptop ${protocol}`);
      const client = createClient(protocol, server.url);
      try {
        const auth = { authorization: `Bearer ${token}` };
        const post = (body: unknown, headers: Record<string, string> = {}) =>
          client.request("POST", "/acp", { headers: { ...auth, ...JSON_TYPE, ...headers }, body: JSON.stringify(body) });
        const initialized = await post(initialize);
        assert.equal(initialized.status, 200, initialized.body);
        const connectionId = String(initialized.headers["acp-connection-id"]);
        const stream = await client.openSse("/acp", { ...auth, accept: "text/event-stream", "acp-connection-id": connectionId });
        assert.ok(isSse(stream), "the connection stream opens");
        const posted = await post({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: dir, mcpServers: [] } }, { "acp-connection-id": connectionId });
        assert.equal(posted.status, 202, posted.body);
        const sessionId = ((await stream.reader.next()) as { result: { sessionId: string } }).result.sessionId;

        await server.devices.revoke(device.deviceId);
        await stream.reader.ended;
        const refused = await post({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text: "echo hi" }] } }, {
          "acp-connection-id": connectionId,
        });
        assert.equal(refused.status, 401, refused.body);
        assert.equal((jsonOf(refused)["error"] as { code: number } | undefined) !== undefined, true, "a JSON-RPC error body");
        await loadWithMain(sessionId);
      } finally {
        await client.close();
      }
    });
  }
});
