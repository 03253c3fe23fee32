// How the SSE sink writes (sidecar/acp/sse.ts) over real sockets: the events
// of one event-loop turn leave in one write, whole and in order; a lone event
// leaves at once (nothing waits for a later one or a timer); and, through the
// transport on h2c, h2 (TLS) and HTTP/1.1, a client that vanishes mid-stream
// releases its stream and its connection's reader count.
import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import { afterEach, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { OutboundStream } from "../../sidecar/acp/outbound-stream.ts";
import { SseSink } from "../../sidecar/http/sse-sink.ts";
import { DEFAULT_SSE_WRITE_CHARS } from "../../sidecar/limits.ts";
import { createClient, type ProtocolClient } from "../helpers/http-clients.ts";
import { SseReader } from "../helpers/sse-reader.ts";
import type { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN, type StartedServer } from "../helpers/transport-server.ts";
import { eventually } from "../helpers/eventually.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
/** Far longer than any wait below: an event held back until the next keep-alive would time a test out. */
const KEEP_ALIVE_MS = 60_000;
const PROTOCOLS = [
  { protocol: "h2c", tls: false },
  { protocol: "h2", tls: true },
  { protocol: "http1", tls: false },
] as const;
type Protocol = (typeof PROTOCOLS)[number]["protocol"];

/** An SSE GET on a socket of its own; `vanish()` drops the socket without a word. */
interface RawStream {
  reader: SseReader;
  vanish(): void;
}

function openRaw(protocol: Protocol, server: StartedServer, headers: Record<string, string>): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    if (protocol === "http1") {
      const req = http.request(`${server.url}/acp`, { headers: { ...headers, accept: "text/event-stream" }, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          req.destroy();
          return reject(new Error(`GET answered ${res.statusCode}`));
        }
        res.on("error", () => {});
        resolve({ reader: new SseReader(res), vanish: () => req.destroy() });
      });
      req.on("error", reject);
      req.end();
      return;
    }
    const session = http2.connect(server.url, server.ca === undefined ? {} : { ca: server.ca });
    session.on("error", () => {});
    const stream = session.request({ ":method": "GET", ":path": "/acp", ...headers, accept: "text/event-stream" }, { endStream: true });
    stream.on("error", () => {});
    stream.once("response", (h) => {
      if (h[":status"] !== 200) {
        session.destroy();
        return reject(new Error(`GET answered ${h[":status"]}`));
      }
      resolve({ reader: new SseReader(stream), vanish: () => session.destroy() });
    });
  });
}

async function post(client: ProtocolClient, headers: Record<string, string>, body: unknown): Promise<number> {
  const answer = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE, ...headers }, body: JSON.stringify(body) });
  return answer.status;
}

/** initialize, the connection stream (on a socket of its own), session/new. */
async function session(protocol: Protocol, server: StartedServer, client: ProtocolClient): Promise<{ connectionId: string; sessionId: string; connectionStream: RawStream }> {
  const init = await client.request("POST", "/acp", {
    headers: { ...AUTH, ...JSON_TYPE },
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } }),
  });
  const connectionId = String(init.headers["acp-connection-id"]);
  const connectionStream = await openRaw(protocol, server, { ...AUTH, "acp-connection-id": connectionId });
  await post(client, { "acp-connection-id": connectionId }, { jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
  const created = (await connectionStream.reader.next()) as { result: { sessionId: string } };
  return { connectionId, sessionId: created.result.sessionId, connectionStream };
}

function promptMessage(id: number, sessionId: string, text: string): unknown {
  return { jsonrpc: "2.0", id, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text }] } };
}

function chunkText(message: unknown): string | undefined {
  const update = (message as { params?: { update?: { content?: { text?: string } } } }).params?.update;
  return update?.content?.text;
}

describe("SSE writes", () => {
  let server: StartedServer | undefined;
  const clients: ProtocolClient[] = [];
  const streams: RawStream[] = [];
  afterEach(async () => {
    for (const s of streams.splice(0)) s.vanish();
    for (const c of clients.splice(0)) await c.close();
    await server?.close();
    server = undefined;
  });

  async function start(protocol: Protocol, tls: boolean, limits: { connectionIdleMs?: number } = {}): Promise<{ client: ProtocolClient; server: StartedServer }> {
    server = await startTransportServer({ tls, limits: { keepAliveMs: KEEP_ALIVE_MS, ...limits } });
    const client = createClient(protocol, server.url, server.ca === undefined ? {} : { ca: server.ca });
    clients.push(client);
    return { client, server };
  }

  for (const { protocol, tls } of PROTOCOLS) {
    it(`${protocol}: the events of one turn arrive whole and in order, then the response`, async () => {
      const { client, server } = await start(protocol, tls);
      const s = await session(protocol, server, client);
      streams.push(s.connectionStream);
      const stream = await openRaw(protocol, server, { ...AUTH, "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId });
      streams.push(stream);
      const count = 200;
      // The test hub sends every echo of a prompt in one event-loop turn, and the response right after.
      const script = Array.from({ length: count }, (_, i) => `echo ${i + 1}`).join("\n");
      const headers = { "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId };
      assert.equal(await post(client, headers, promptMessage(2, s.sessionId, script)), 202);
      const seen = await stream.reader.until((m) => m["id"] === 2);
      assert.deepEqual(
        seen.slice(0, -1).map(chunkText),
        Array.from({ length: count }, (_, i) => String(i + 1)),
      );
      assert.equal(seen.length, count + 1, "every echo, then the response");
    });

    it(`${protocol}: a lone event leaves at once: a permission request the server then waits on reaches the client`, async () => {
      const { client, server } = await start(protocol, tls);
      const s = await session(protocol, server, client);
      streams.push(s.connectionStream);
      const stream = await openRaw(protocol, server, { ...AUTH, "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId });
      streams.push(stream);
      const headers = { "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId };
      assert.equal(await post(client, headers, promptMessage(2, s.sessionId, "permission Edit a file")), 202);
      // Nothing else is sent until the answer: were the request held for a later event, it would never come.
      const request = (await stream.reader.next(5_000)) as { id: string; method: string };
      assert.equal(request.method, Acp.client.session.requestPermission);
      assert.equal(await post(client, headers, { jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } }), 202);
      const rest = await stream.reader.until((m) => m["id"] === 2, 5_000);
      assert.deepEqual(rest.map((m) => chunkText(m) ?? m["id"]), ["outcome: selected allow_once", 2]);
    });

    it(`${protocol}: a client that vanishes mid-stream releases its stream: it can be opened again at once, and gets what follows`, async () => {
      const { client, server } = await start(protocol, tls);
      const s = await session(protocol, server, client);
      streams.push(s.connectionStream);
      const headers = { "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId };
      const first = await openRaw(protocol, server, { ...AUTH, ...headers });
      assert.equal(await post(client, headers, promptMessage(2, s.sessionId, "flood 2000 1024")), 202);
      for (let i = 0; i < 20; i++) await first.reader.next();
      first.vanish();
      // The server learns of it from the socket; until then the stream is taken (409).
      let second: RawStream | undefined;
      const deadline = Date.now() + 10_000;
      while (second === undefined) {
        second = await openRaw(protocol, server, { ...AUTH, ...headers }).catch(async (error: Error) => {
          if (!error.message.includes("409") || Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 10));
          return undefined;
        });
      }
      streams.push(second);
      const rest = await second.reader.until((m) => m["id"] === 2, 30_000);
      assert.ok(rest.length > 1, "the rest of the flood and the response");
      assert.equal(await post(client, headers, promptMessage(3, s.sessionId, "echo after")), 202);
      const after = await second.reader.until((m) => m["id"] === 3);
      assert.deepEqual(after.map((m) => chunkText(m) ?? m["id"]), ["after", 3]);
    });

    it(`${protocol}: a client that vanishes mid-stream with both its streams leaves its connection idle: it detaches after the idle time`, async () => {
      const { client, server } = await start(protocol, tls, { connectionIdleMs: 200 });
      const hub = server.hub as TransportHub;
      const s = await session(protocol, server, client);
      const headers = { "acp-connection-id": s.connectionId, "acp-session-id": s.sessionId };
      const stream = await openRaw(protocol, server, { ...AUTH, ...headers });
      assert.equal(await post(client, headers, promptMessage(2, s.sessionId, "flood 2000 1024")), 202);
      for (let i = 0; i < 20; i++) await stream.reader.next();
      stream.vanish();
      s.connectionStream.vanish();
      await eventually("the connection to detach", () => hub.events.detached.includes(s.connectionId));
      const answer = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE, ...headers }, body: JSON.stringify(promptMessage(3, s.sessionId, "echo x")) });
      assert.equal(answer.status, 404, "the connection is gone");
    });
  }
});

describe("SseSink on a real response", () => {
  /**
   * A server whose one response is an SseSink, with the writes on its stream
   * (HTTP/2) or response (HTTP/1.1) counted and their lengths kept.
   */
  async function sinkServer(protocol: "h2c" | "http1", onDrain: () => void = () => {}): Promise<{ sink: SseSink; writes: () => number; lengths: number[]; reader: SseReader; close(): Promise<void> }> {
    const lengths: number[] = [];
    let made!: (sink: SseSink) => void;
    const sinkMade = new Promise<SseSink>((resolve) => (made = resolve));
    const handler = (_req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void => {
      const target = (res instanceof http2.Http2ServerResponse ? res.stream : res) as { write: (...args: unknown[]) => boolean };
      const write = target.write.bind(target);
      target.write = (...args: unknown[]) => {
        lengths.push(String(args[0]).length);
        return write(...args);
      };
      made(new SseSink(res, { keepAliveMs: KEEP_ALIVE_MS, onDrain: () => onDrain(), onClose: () => {} }));
    };
    const server = protocol === "h2c" ? http2.createServer(handler) : http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    let reader: SseReader;
    let closeClient: () => void;
    if (protocol === "h2c") {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on("error", () => {});
      const stream = session.request({ ":path": "/" }, { endStream: true });
      stream.on("error", () => {});
      reader = new SseReader(stream);
      closeClient = () => session.destroy();
    } else {
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(`http://127.0.0.1:${port}/`, { agent: false }, resolve).on("error", reject));
      res.on("error", () => {});
      reader = new SseReader(res);
      closeClient = () => res.destroy();
    }
    const sink = await sinkMade;
    // The headers went out with writeHead; count only the events' writes.
    lengths.length = 0;
    return {
      sink,
      writes: () => lengths.length,
      lengths,
      reader,
      close: async () => {
        closeClient();
        sink.abort();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  for (const protocol of ["h2c", "http1"] as const) {
    it(`${protocol}: the events handed over in one event-loop turn are one write, whole and in order`, async () => {
      const s = await sinkServer(protocol);
      try {
        for (let i = 1; i <= 100; i++) s.sink.write(JSON.stringify({ n: i }));
        assert.equal(s.writes(), 0, "nothing is written while the turn hands events over");
        const seen: unknown[] = [];
        for (let i = 1; i <= 100; i++) seen.push(await s.reader.next());
        assert.deepEqual(seen, Array.from({ length: 100 }, (_, i) => ({ n: i + 1 })));
        assert.equal(s.writes(), 1);
      } finally {
        await s.close();
      }
    });

    it(`${protocol}: a backlog leaves a batch at a time, each write within DEFAULT_SSE_WRITE_CHARS and one event, every event once and in order`, async () => {
      let stream: OutboundStream | undefined;
      const s = await sinkServer(protocol, () => stream?.resume());
      try {
        stream = new OutboundStream({ maxQueuedMessages: 1_000_000, maxQueuedBytes: 1 << 30 });
        assert.equal(stream.attach(s.sink), "attached");
        // 3,000 events of about 330 characters, all in one turn: 15 times the bound.
        const count = 3_000;
        const pad = "x".repeat(280);
        for (let n = 1; n <= count; n++) stream.push({ jsonrpc: "2.0", method: "m", params: { n, pad } });
        assert.ok(stream.queuedMessages > 0, "the sink answered full at the bound, so the rest waits in the stream");
        const seen: number[] = [];
        for (let i = 0; i < count; i++) seen.push(((await s.reader.next()) as { params: { n: number } }).params.n);
        assert.deepEqual(seen, Array.from({ length: count }, (_, i) => i + 1));
        const event = `data: ${JSON.stringify({ jsonrpc: "2.0", method: "m", params: { n: count, pad } })}\n\n`.length;
        assert.ok(s.lengths.length >= 14, `written in batches (${s.lengths.length} writes)`);
        for (const length of s.lengths) assert.ok(length <= DEFAULT_SSE_WRITE_CHARS + event, `a write of ${length} characters`);
        assert.equal(stream.queuedMessages, 0);
      } finally {
        stream?.close();
        await s.close();
      }
    });

    it(`${protocol}: a lone event is written before the next turn of the event loop, and the next turn's events after it`, async () => {
      const s = await sinkServer(protocol);
      try {
        s.sink.write(JSON.stringify({ n: 1 }));
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(s.writes(), 1, "written without waiting for another event or a timer");
        s.sink.write(JSON.stringify({ n: 2 }));
        s.sink.write(JSON.stringify({ n: 3 }));
        assert.deepEqual([await s.reader.next(), await s.reader.next(), await s.reader.next()], [{ n: 1 }, { n: 2 }, { n: 3 }]);
        assert.equal(s.writes(), 2);
      } finally {
        await s.close();
      }
    });
  }
});
