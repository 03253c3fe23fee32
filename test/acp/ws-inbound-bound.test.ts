// Messages a WebSocket client sends while `initialize` waits on the agent wait
// in order; their number and bytes are bounded: a client that floods frames
// meanwhile is closed with 1008 instead of growing the server's memory, while a
// client that pipelines a few messages is answered in order.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { DEFAULT_WS_MAX_INBOUND_MESSAGES } from "../../sidecar/limits.ts";
import { serve } from "../../sidecar/server/serve.ts";
import { CloseCode } from "../../sidecar/acp/ws-profile.ts";
import { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const FIXTURE_AGENT = fileURLToPath(new URL("../fixtures/agent.ts", import.meta.url));
const SERVE_TOKEN = "ws-inbound-bound-token-0123456789";
const INITIALIZE = { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };
const sessionNew = (id: number) => ({ jsonrpc: "2.0", id, method: Acp.agent.session.new, params: { cwd: "/", mcpServers: [] } });

/** The socket's close, or a failure naming what did not happen within the deadline. */
function closedWithin(client: WsTestClient, timeoutMs: number): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the socket did not close within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([client.closed, deadline]).finally(() => clearTimeout(timer));
}

async function open(url: string, token: string): Promise<WsTestClient> {
  const client = await WsTestClient.open(url, { headers: { authorization: `Bearer ${token}` } });
  if (isRefusal(client)) throw new Error(`refused: ${client.status} ${client.body}`);
  return client;
}

describe("a WebSocket client sending while initialize waits on the agent", () => {
  it("regression: frames sent while initialize waited on a slow agent queued without limit", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acp-ws-inbound-"));
    const lines: string[] = [];
    const server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [{ name: "slow", command: process.execPath, args: [FIXTURE_AGENT], env: { FIXTURE_AGENT_SILENT: "1" } }],
      tokens: [SERVE_TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: (line) => lines.push(line),
    });
    const client = await open(`${server.url}/acp`, SERVE_TOKEN);
    try {
      client.send(INITIALIZE);
      for (let i = 1; i <= 5_000 && client.ws.readyState === client.ws.OPEN; i++) client.send(sessionNew(i));
      const closed = await closedWithin(client, 15_000);
      assert.equal(closed.code, CloseCode.PolicyViolation);
      assert.match(closed.reason, /too many messages/);
      assert.ok(lines.some((line) => line.includes(`more than ${DEFAULT_WS_MAX_INBOUND_MESSAGES} messages`)), lines.join("\n"));
    } finally {
      await client.close();
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("the byte bound holds as well: a few large frames past it close with 1008", async () => {
    const hub = new TransportHub();
    hub.initializeGate = new Promise<void>(() => {});
    const server = await startTransportServer({ hub, limits: { wsMaxInboundBytes: 256 * 1024 } });
    const client = await open(server.acpUrl, TOKEN);
    try {
      client.send(INITIALIZE);
      const large = { ...sessionNew(1), params: { cwd: "/", mcpServers: [], padding: "x".repeat(100 * 1024) } };
      for (let i = 0; i < 4; i++) client.send(large);
      const closed = await closedWithin(client, 10_000);
      assert.equal(closed.code, CloseCode.PolicyViolation);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a client that pipelines within the bound is answered in order once initialize is answered", async () => {
    const hub = new TransportHub();
    let release: () => void = () => {};
    hub.initializeGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startTransportServer({ hub, limits: { wsMaxInboundMessages: 8 } });
    const client = await open(server.acpUrl, TOKEN);
    try {
      client.send(INITIALIZE);
      for (let i = 1; i <= 7; i++) client.send(sessionNew(i));
      // Initialize is held until all eight messages wait on the server.
      const link = () => [...hub.live][0]?.link as { inboundQueued?: number } | undefined;
      const deadline = Date.now() + 10_000;
      while ((link()?.inboundQueued ?? 0) < 8) {
        if (Date.now() > deadline) throw new Error("the eight messages did not reach the server");
        await new Promise((r) => setTimeout(r, 10));
      }
      release();
      const ids: unknown[] = [];
      for (let i = 0; i <= 7; i++) ids.push((await client.next())["id"]);
      assert.deepEqual(ids, [0, 1, 2, 3, 4, 5, 6, 7]);
      assert.equal(client.ws.readyState, client.ws.OPEN);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
