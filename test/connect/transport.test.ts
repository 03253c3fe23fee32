// The client transport library on its own (client/), against servers
// that do one thing on purpose: the SDK's AcpServer for the message flow, a
// scripted HTTP/2 server for SSE framing and bounds, a scripted WebSocket
// server for frame types, a proxy that goes silent for liveness.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { CookieJar, createTransport, HttpTransport, type TransportOptions } from "../../client/index.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { startScriptedH2 } from "../helpers/scripted-h2-server.ts";
import { startSdkServer, type SdkServer } from "../helpers/sdk-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { watchTransport, type WatchedTransport } from "../helpers/transport-watch.ts";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } } as const;

const hasId = (id: string | number) => (m: JsonRpcMessage) => "id" in m && m.id === id && !("method" in m);

describe("Streamable HTTP message flow (SDK AcpServer over h2c)", () => {
  /** The SDK's AcpServer over h2c, closed when the file ends. */
  async function sdkServer(): Promise<SdkServer> {
    const server = await startSdkServer("h2c");
    cleanups.push(() => server.close());
    return server;
  }

  /** An HttpTransport to `url`, watched, once its initialize is answered. */
  async function initialized(url: string, options: TransportOptions = {}): Promise<{ t: HttpTransport; w: WatchedTransport }> {
    const t = new HttpTransport(url, options);
    const w = watchTransport(t);
    await t.send(INITIALIZE);
    await w.next(hasId(0));
    return { t, w };
  }

  test("8. To resume: POST initialize (new connection), GET session stream, then POST session/load — the GET comes first", async () => {
    const server = await sdkServer();
    const jar = new CookieJar();
    const { t: first, w: w1 } = await initialized(server.url, { cookies: jar });
    await first.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } });
    const created = (await w1.next(hasId(1))) as { result: { sessionId: string } };
    const sessionId = created.result.sessionId;
    await first.close();

    const { t: second, w: w2 } = await initialized(server.url, { cookies: jar });
    const before = server.requests.length;
    await second.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: "/tmp", mcpServers: [] } });
    const loaded = await w2.next(hasId(2));
    assert.ok("result" in loaded, JSON.stringify(loaded));
    const after = server.requests.slice(before).filter((r) => r.sessionId === sessionId);
    assert.deepEqual(
      after.map((r) => r.method),
      ["GET", "POST"],
      "the session stream opens before session/load is posted",
    );
    assert.equal(second.connectionId, after[0]?.connectionId);
    await second.close();
  });

  test("a server-to-client request's answer is POSTed with the Acp-Session-Id of the stream that carried it", async () => {
    const server = await sdkServer();
    const { t, w } = await initialized(server.url);
    await t.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } });
    const sessionId = ((await w.next(hasId(1))) as { result: { sessionId: string } }).result.sessionId;
    await t.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "permission Deploy" }] } });
    const ask = (await w.next((m) => "method" in m && m.method === "session/request_permission")) as { id: number };
    const before = server.requests.length;
    // The answer names no session in its body: only the transport knows where it goes.
    await t.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow" } } });
    const done = (await w.next(hasId(2))) as { result: { stopReason: string } };
    assert.equal(done.result.stopReason, "end_turn");
    assert.equal(server.requests[before]?.method, "POST");
    assert.equal(server.requests[before]?.sessionId, sessionId);
    await t.close();
  });

  test("DELETE on close ends the connection, with its Acp-Connection-Id", async () => {
    const server = await sdkServer();
    const { t, w } = await initialized(server.url);
    const id = t.connectionId;
    await t.close();
    assert.equal(await w.closed, undefined, "a close on purpose reports no error");
    const deletes = server.requests.filter((r) => r.method === "DELETE");
    assert.deepEqual(
      deletes.map((r) => r.connectionId),
      [id],
    );
  });
});

describe("SSE framing and bounds (scripted HTTP/2 server)", () => {
  async function scripted(events: string): Promise<string> {
    const server = await startScriptedH2((req, res) => {
      if (req.method === "POST") {
        res.writeHead(200, { "content-type": "application/json", "acp-connection-id": "conn-1" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1 } }));
        return;
      }
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(events);
        return;
      }
      res.writeHead(202);
      res.end();
    });
    cleanups.push(() => server.close());
    return server.acpUrl;
  }

  test("keep-alive comments are skipped, multi-line data is one message, then an oversized event ends the connection", async () => {
    const url = await scripted(
      ":\n\n" +
        'data: {"jsonrpc":"2.0",\ndata: "method":"x/one"}\n\n' +
        ": keep-alive\n\n" +
        'data: {"jsonrpc":"2.0","method":"x/two"}\r\n\r\n' +
        `data: {"jsonrpc":"2.0","method":"x/big","params":"${"y".repeat(4096)}"}\n\n`,
    );
    const t = createTransport(url, { transport: "http", maxMessageBytes: 1024 });
    const w = watchTransport(t);
    await t.send(INITIALIZE);
    const error = await w.closed;
    assert.deepEqual(
      w.messages.map((m) => ("method" in m ? m.method : `response ${String(m.id)}`)),
      ["response 0", "x/one", "x/two"],
    );
    assert.match(error?.message ?? "", /exceeds 1024 bytes/);
  });
});

describe("WebSocket frames (scripted WebSocket server)", () => {
  test("the 101's Acp-Connection-Id is read; binary frames are ignored; text frames are messages", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    wss.on("headers", (headers) => headers.push("Acp-Connection-Id: ws-conn-9"));
    wss.on("connection", (socket) => {
      socket.on("message", (data, isBinary) => {
        if (isBinary) return;
        const request = JSON.parse(String(data)) as { id: number };
        socket.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", method: "x/binary" })), { binary: true });
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { protocolVersion: 1 } }));
      });
    });
    const url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}/acp`;
    const t = createTransport(url, { transport: "ws" });
    const w = watchTransport(t);
    await t.start();
    assert.equal(t.connectionId, "ws-conn-9");
    await t.send(INITIALIZE);
    await w.next(hasId(0));
    assert.deepEqual(
      w.messages.map((m) => ("method" in m ? m.method : `response ${String(m.id)}`)),
      ["response 0"],
    );
    await t.close();
  });
});

describe("liveness: a network that goes silent without closing", () => {
  for (const [transport, profile, reason, what] of [
    ["http", "h2c", /ping/, "an unanswered HTTP/2 ping"],
    ["ws", "http1", /pong/, "an unanswered WebSocket ping"],
  ] as const) {
    test(`--transport ${transport} (${profile} server): ${what} ends the connection`, async () => {
      const server = await startSdkServer(profile);
      cleanups.push(() => server.close());
      const proxy = await startTcpProxy(server.port);
      cleanups.push(() => proxy.close());
      const t = createTransport(`http://127.0.0.1:${proxy.port}/acp`, { transport, pingIntervalMs: 200, pingTimeoutMs: 500 });
      const w = watchTransport(t);
      await t.start();
      await t.send(INITIALIZE);
      await w.next(hasId(0));
      proxy.freeze();
      const error = await w.closed;
      assert.match(error?.message ?? "", reason);
    });
  }
});

describe("liveness over HTTP/1.1 (no pings): the connection stream's keep-alives (scripted HTTP/1.1 server)", () => {
  async function http1Server(keepAlive: boolean): Promise<string> {
    const server = http.createServer((req, res) => {
      if (req.method === "POST" && req.headers["acp-connection-id"] === undefined) {
        res.writeHead(200, { "content-type": "application/json", "acp-connection-id": "conn-h1" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1 } }));
        return;
      }
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        // One keep-alive, then silence; or silence from the start.
        res.write(keepAlive ? ":\n\n" : "");
        return;
      }
      res.writeHead(202);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/acp`;
  }

  test("a server that sent keep-alives and then goes silent: the connection counts as lost", async () => {
    const t = createTransport(await http1Server(true), { transport: "http", streamIdleMs: 300 });
    const w = watchTransport(t);
    await t.send(INITIALIZE);
    assert.equal(t.protocol, "http/1.1");
    const error = await w.closed;
    assert.match(error?.message ?? "", /no data, not even a keep-alive, for 300 ms/);
  });

  test("a server that never sends keep-alives is not cut off for being quiet", async () => {
    const t = createTransport(await http1Server(false), { transport: "http", streamIdleMs: 300 });
    const w = watchTransport(t);
    await t.send(INITIALIZE);
    const outcome = await Promise.race([w.closed.then(() => "closed"), new Promise((r) => setTimeout(() => r("open"), 1_000))]);
    assert.equal(outcome, "open");
    await t.close();
  });
});
