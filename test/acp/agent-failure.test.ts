// When the agent behind /acp cannot start, initialize fails clearly and no
// connection is left behind: 502 with a JSON-RPC error on Streamable HTTP, the
// error then a 1011 close on WebSocket. Real sidecar, real (failing) agent.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { serve } from "../../sidecar/server/serve.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { createClient, jsonOf } from "../helpers/http-clients.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const TOKEN = "agent-failure-token-0123456789";
const FIXTURE_AGENT = fileURLToPath(new URL("../fixtures/agent.ts", import.meta.url));
const INITIALIZE = { jsonrpc: "2.0", id: 1, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };

describe("an agent that cannot start", () => {
  let server: RunningServer;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-agent-failure-"));
    server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [{ name: "broken", command: process.execPath, args: [FIXTURE_AGENT], env: { FIXTURE_AGENT_EXIT_ON_START: "3" } }],
      tokens: [TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: () => {},
    });
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("Streamable HTTP: initialize answers 502 with a JSON-RPC error naming the agent; no connection is kept", async () => {
    const client = createClient("h2c", server.url);
    try {
      const response = await client.request("POST", "/acp", {
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(INITIALIZE),
      });
      assert.equal(response.status, 502, response.body);
      assert.equal(response.headers["acp-connection-id"], undefined);
      const error = jsonOf(response)["error"] as { code: number; message: string };
      assert.equal(error.code, ErrorCode.InternalError);
      assert.match(error.message, /broken/);
      assert.equal(server.hub.status().connections.length, 0);
    } finally {
      await client.close();
    }
  });

  it("WebSocket: the initialize error arrives with its id, then the socket closes with 1011", async () => {
    const ws = await WsTestClient.open(`${server.url}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.ok(!isRefusal(ws));
    ws.send(INITIALIZE);
    const answer = (await ws.next(60_000)) as { id: number; error: { code: number } };
    assert.equal(answer.id, 1);
    assert.equal(answer.error.code, ErrorCode.InternalError);
    assert.equal((await ws.closed).code, 1011);
  });
});
