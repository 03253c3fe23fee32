// Limits over real sockets: a client that stops reading its SSE stream is cut
// off once its queue bound is hit while other clients go on; a Streamable
// HTTP connection with no stream detaches after the idle time; past the
// connection bound, 503.
import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import { afterEach, describe, it } from "node:test";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { createClient, isSse, jsonOf } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import type { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";
import { eventually } from "../helpers/eventually.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
/**
 * Updates sent to each client: enough to fill what sits between the server
 * and a reader that stopped. On HTTP/2 that is the stream's flow-control
 * window (64 KiB); on HTTP/1.1 and WebSocket the kernel's socket buffers,
 * whose receive side Linux may grow towards tcp_rmem's maximum (32 MiB here)
 * even while the application does not read: 80 MiB is past any of them.
 */
const FLOOD = {
  h2c: { count: 3_000, bytes: 1024 },
  http1: { count: 2_500, bytes: 32 * 1024 },
} as const;
const floodScript = (protocol: keyof typeof FLOOD) => `flood ${FLOOD[protocol].count} ${FLOOD[protocol].bytes}`;

/** initialize, connection stream, session/new: returns the ids and the connection stream. */
async function session(client: ProtocolClient): Promise<{ connectionId: string; sessionId: string; connectionStream: OpenedSse }> {
  const init = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE });
  const connectionId = String(init.headers["acp-connection-id"]);
  const connectionStream = (await client.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": connectionId })) as OpenedSse;
  await client.request("POST", "/acp", {
    headers: { ...AUTH, ...JSON_TYPE, "acp-connection-id": connectionId },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } }),
  });
  const created = (await connectionStream.reader.next()) as { result: { sessionId: string } };
  return { connectionId, sessionId: created.result.sessionId, connectionStream };
}

function prompt(client: ProtocolClient, connectionId: string, sessionId: string, id: number, text: string): Promise<RawResponse> {
  return client.request("POST", "/acp", {
    headers: { ...AUTH, ...JSON_TYPE, "acp-connection-id": connectionId, "acp-session-id": sessionId },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text }] } }),
  });
}

/**
 * Opens a session stream and stops reading it. A paused stream reports its
 * end only once read, so `resume()` it to see `ended`.
 */
function stalledStream(
  protocol: "h2c" | "http1",
  baseUrl: string,
  connectionId: string,
  sessionId: string,
): Promise<{ ended: Promise<void>; resume(): void; close(): void }> {
  const headers = { ...AUTH, accept: "text/event-stream", "acp-connection-id": connectionId, "acp-session-id": sessionId };
  if (protocol === "h2c") {
    return new Promise((resolve, reject) => {
      const session = http2.connect(baseUrl);
      session.on("error", () => {});
      const stream = session.request({ ":method": "GET", ":path": "/acp", ...headers });
      stream.on("error", () => {});
      stream.once("response", () => {
        stream.pause();
        resolve({ ended: new Promise((r) => stream.once("close", () => r())), resume: () => stream.resume(), close: () => session.destroy() });
      });
      stream.once("error", reject);
    });
  }
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}/acp`, { headers }, (res) => {
      res.pause();
      res.on("error", () => {});
      resolve({ ended: new Promise((r) => res.once("close", () => r())), resume: () => res.resume(), close: () => req.destroy() });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("a client that stops reading its SSE stream", () => {
  let server: StartedServer;
  const clients: ProtocolClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await server.close();
  });

  for (const protocol of ["h2c", "http1"] as const) {
    it(`${protocol}: is cut off once the queue bound is hit; another client's stream goes on`, async () => {
      const logs: string[] = [];
      server = await startTransportServer({ limits: { maxQueuedMessages: 50, maxQueuedBytes: 1024 * 1024 }, log: (l) => logs.push(l) });
      const stalledClient = createClient(protocol, server.url);
      const readingClient = createClient(protocol, server.url);
      clients.push(stalledClient, readingClient);

      const stalled = await session(stalledClient);
      const reading = await session(readingClient);
      const stuck = await stalledStream(protocol, server.url, stalled.connectionId, stalled.sessionId);
      const readingStream = (await readingClient.openSse("/acp", {
        ...AUTH,
        accept: "text/event-stream",
        "acp-connection-id": reading.connectionId,
        "acp-session-id": reading.sessionId,
      })) as OpenedSse;
      assert.ok(isSse(readingStream));

      assert.equal((await prompt(stalledClient, stalled.connectionId, stalled.sessionId, 2, floodScript(protocol))).status, 202);
      assert.equal((await prompt(readingClient, reading.connectionId, reading.sessionId, 2, floodScript(protocol))).status, 202);

      await eventually("the stalled stream to be cut off", () => logs.some((l) => l.includes("cut off")), 60_000);
      // Reading again, the client finds its stream ended by the server.
      stuck.resume();
      await stuck.ended;
      // The reading client gets every update and the response.
      const seen = await readingStream.reader.until((m) => m["id"] === 2, 60_000);
      assert.equal(seen.length, FLOOD[protocol].count + 1, "the flood and the response");
      // The stalled client's connection is still usable.
      const again = await stalledClient.request("POST", "/acp", {
        headers: { ...AUTH, ...JSON_TYPE, "acp-connection-id": stalled.connectionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } }),
      });
      assert.equal(again.status, 202);
      stuck.close();
      readingStream.close();
      stalled.connectionStream.close();
      reading.connectionStream.close();
    });
  }
});

describe("a WebSocket client that stops reading", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  it("is cut off once its queue bound is hit; another WebSocket goes on", async () => {
    const logs: string[] = [];
    server = await startTransportServer({ limits: { maxQueuedMessages: 50, maxQueuedBytes: 1024 * 1024 }, log: (l) => logs.push(l) });
    const open = async () => {
      const ws = await WsTestClient.open(server.acpUrl, { headers: AUTH });
      assert.ok(!isRefusal(ws));
      ws.send(JSON.parse(INITIALIZE));
      await ws.next();
      ws.send({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
      const sessionId = ((await ws.next()) as { result: { sessionId: string } }).result.sessionId;
      return { ws, sessionId };
    };
    const stalled = await open();
    const reading = await open();
    const floodPrompt = (sessionId: string) => ({
      jsonrpc: "2.0",
      id: 2,
      method: Acp.agent.session.prompt,
      params: { sessionId, prompt: [{ type: "text", text: floodScript("http1") }] },
    });
    // Stop reading the socket once the prompt is out.
    await new Promise<void>((resolve) => stalled.ws.ws.send(JSON.stringify(floodPrompt(stalled.sessionId)), () => resolve()));
    stalled.ws.ws.pause();
    reading.ws.send(floodPrompt(reading.sessionId));
    await eventually("the stalled socket to be cut off", () => logs.some((l) => l.includes("cut off")), 60_000);
    let received = 0;
    for (;;) {
      const m = await reading.ws.next(60_000);
      received += 1;
      if (m["id"] === 2) break;
    }
    assert.equal(received, FLOOD.http1.count + 1, "the other client gets the flood and the response");
    stalled.ws.ws.resume();
    await stalled.ws.closed;
    await reading.ws.close();
  });
});

describe("idle Streamable HTTP connections", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  it("a connection with no stream and no request detaches after connectionIdleMs; its id is then unknown (404)", async () => {
    server = await startTransportServer({ limits: { connectionIdleMs: 200 } });
    const client = createClient("h2c", server.url);
    try {
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE });
      const connectionId = String(init.headers["acp-connection-id"]);
      const hub = server.hub as TransportHub;
      await eventually("the detach", () => hub.events.detached.includes(connectionId));
      assert.ok(!hub.events.closed.includes(connectionId), "detached, not closed");
      const late = await client.request("DELETE", "/acp", { headers: { ...AUTH, "acp-connection-id": connectionId } });
      assert.equal(late.status, 404);
    } finally {
      await client.close();
    }
  });

  it("an open stream keeps the connection; when it goes, the idle time starts", async () => {
    server = await startTransportServer({ limits: { connectionIdleMs: 200, keepAliveMs: 100 } });
    const client = createClient("h2c", server.url);
    try {
      const { connectionId, connectionStream } = await session(client);
      // Four idle times pass on the server's clock: 8 keep-alives, 100 ms apart.
      await connectionStream.reader.commentsAtLeast(8);
      const hub = server.hub as TransportHub;
      assert.ok(!hub.events.detached.includes(connectionId), "not detached while its stream is open");
      connectionStream.close();
      await eventually("the detach", () => hub.events.detached.includes(connectionId));
    } finally {
      await client.close();
    }
  });
});

describe("the connection bound", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  it("past maxConnections: 503 with Retry-After, for initialize and for the WebSocket upgrade", async () => {
    server = await startTransportServer({ limits: { maxConnections: 2 } });
    const client = createClient("http1", server.url);
    try {
      for (let i = 0; i < 2; i++) {
        assert.equal((await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE })).status, 200);
      }
      const refused = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE });
      assert.equal(refused.status, 503);
      assert.equal((jsonOf(refused)["error"] as { code: number }).code, ErrorCode.InternalError);
      assert.ok(refused.headers["retry-after"] !== undefined);
      const ws = await WsTestClient.open(server.acpUrl, { headers: AUTH });
      assert.ok(isRefusal(ws));
      assert.equal(ws.status, 503);
    } finally {
      await client.close();
    }
  });
});
