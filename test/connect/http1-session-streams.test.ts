// The Streamable HTTP client's session streams over HTTP/1.1, where each
// stream is a socket of its own that a proxy or the network can lose alone:
// one cut before its first message resumes (the server's first event gives it
// an id) instead of asking anew and getting 409; one that goes silent is
// noticed and resumed; and loads whose stream waits for their answer are not
// kept once answered with an error. A real server (the transport with the test
// hub, keep-alives every 100 ms) behind a proxy that speaks only HTTP/1.1, the
// client library's HttpTransport as the client; the last row against a
// scripted server that refuses a session's stream before its load, as qwen
// serve does.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { HttpTransport } from "../../client/index.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import { watchTransport, type WatchedTransport } from "../helpers/transport-watch.ts";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } } as const;
/** Keep-alives of the server, and the client's bound on a silent stream, in milliseconds. */
const KEEP_ALIVE_MS = 100;
const STREAM_IDLE_MS = 1_000;
const WAIT_MS = 15_000;

const isSessionStreamGet = (head: string): boolean => head.startsWith("GET ") && /\r\nacp-session-id:/i.test(head);

/** Resolves once `check` holds; rejects after `ms`. */
async function waitFor(check: () => boolean, what: string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const answerTo = (id: number) => (m: JsonRpcMessage) => "id" in m && m.id === id && !("method" in m);
const chunk = (text: string) => (m: JsonRpcMessage) => "method" in m && m.method === "session/update" && JSON.stringify(m.params).includes(`"text":"${text}"`);

/** A server and an HTTP/1.1-only proxy in front of it; a client through the proxy with a session open. */
async function sessionThroughProxy(): Promise<{ proxy: TcpProxy; client: HttpTransport; w: WatchedTransport; sessionId: string }> {
  const server = await startTransportServer({ limits: { keepAliveMs: KEEP_ALIVE_MS } });
  cleanups.push(() => server.close());
  const proxy = await startTcpProxy(server.port, "127.0.0.1", { http1Only: true });
  cleanups.push(() => proxy.close());
  const client = new HttpTransport(`http://127.0.0.1:${proxy.port}/acp`, { token: TOKEN, streamIdleMs: STREAM_IDLE_MS });
  cleanups.push(() => client.close());
  const w = watchTransport(client, WAIT_MS);
  await client.send(INITIALIZE);
  await w.next(answerTo(0), "the initialize answer");
  assert.equal(client.protocol, "http/1.1");
  await client.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } });
  const created = (await w.next(answerTo(1), "the session/new answer")) as { result: { sessionId: string } };
  return { proxy, client, w, sessionId: created.result.sessionId };
}

describe("session streams over HTTP/1.1", () => {
  test("regression: a session stream cut before its first message was opened anew without Last-Event-ID, got 409, and the connection was lost; it resumes and the session goes on", async () => {
    const { proxy, client, w, sessionId } = await sessionThroughProxy();
    // The session's stream is open and the server has written on it (its first event, or a keep-alive), no message yet.
    await waitFor(() => proxy.answeredWhere(isSessionStreamGet).some((a) => /\r\n\r\n[\s\S]+/.test(a)), "the session stream's first bytes");
    // A proxy times the GET out: the client's side ends; the server still holds it.
    assert.equal(proxy.endClientWhere(isSessionStreamGet), 1);
    await client.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "echo after-the-cut" }] } });
    await w.next(chunk("after-the-cut"), "the update after the cut");
    await w.next(answerTo(2), "the prompt's answer");
    assert.equal(w.state.closed, "open", "the connection lives on");
  });

  test("regression: a session stream that went silent was never noticed (only the connection stream was watched); it is resumed and what it missed arrives", async () => {
    const { proxy, client, w, sessionId } = await sessionThroughProxy();
    await client.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "echo before" }] } });
    await w.next(answerTo(2), "the first prompt's answer");
    // The network under the session's stream goes silent; the connection's stream goes on.
    assert.equal(proxy.freezeWhere(isSessionStreamGet), 1);
    await client.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "echo while-silent" }] } });
    await w.next(chunk("while-silent"), "the update written while the stream was silent");
    await w.next(answerTo(3), "the second prompt's answer");
    assert.equal(w.state.closed, "open", "the connection lives on");
  });

  test("regression: a load whose stream waits for its answer stayed kept when it was answered with an error, or refused", async () => {
    // A server that refuses a session's stream until the session is loaded
    // (403), answers one load with an error on the connection stream, and
    // refuses the POST of another (409).
    let connectionStream: http.ServerResponse | undefined;
    const server = http.createServer((req, res) => {
      if (req.method === "POST" && req.headers["acp-connection-id"] === undefined) {
        res.writeHead(200, { "content-type": "application/json", "acp-connection-id": "conn-1" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1 } }));
        return;
      }
      if (req.method === "DELETE") {
        res.writeHead(202);
        res.end();
        return;
      }
      if (req.method === "GET") {
        if (req.headers["acp-session-id"] !== undefined) {
          res.writeHead(403, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Session not owned by this connection" } }));
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        connectionStream = res;
        return;
      }
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        const message = JSON.parse(body) as { id: number; params: { sessionId: string } };
        if (message.params.sessionId === "refused") {
          res.writeHead(409, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "busy" } }));
          return;
        }
        res.writeHead(202);
        res.end();
        connectionStream?.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32002, message: "no such session" } })}\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const client = new HttpTransport(`http://127.0.0.1:${(server.address() as AddressInfo).port}/acp`, {});
    cleanups.push(() => client.close());
    const w = watchTransport(client, WAIT_MS);
    await client.send(INITIALIZE);
    await w.next(answerTo(0), "the initialize answer");
    await client.send({ jsonrpc: "2.0", id: 1, method: "session/load", params: { sessionId: "gone", cwd: "/tmp", mcpServers: [] } });
    const failed = (await w.next(answerTo(1), "the load's error")) as { error?: { code: number } };
    assert.equal(failed.error?.code, -32002);
    await client.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId: "refused", cwd: "/tmp", mcpServers: [] } });
    const refused = (await w.next(answerTo(2), "the refused load's error")) as { error?: { data?: { status: number } } };
    assert.equal(refused.error?.data?.status, 409);
    assert.equal(client.loadsAwaitingStream, 0, "no load is kept once answered");
  });
});
