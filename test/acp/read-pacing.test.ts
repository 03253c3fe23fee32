// An agent's reads are paced on the client streams its updates fill
// (common/read-pacing.ts): the next read waits while a stream fed by the last
// one is past its high-water mark, until its reader took the backlog, and at
// most for a bound; a reader that does not drain in that time is not waited
// for again. The reader over a real PassThrough into real outbound streams;
// then the real sidecar with its fixture agent and two h2c clients, one of
// which stops reading.
import assert from "node:assert/strict";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { NdjsonMessageReader } from "../../common/ndjson.ts";
import { ReadPacing } from "../../common/read-pacing.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { OutboundStream } from "../../sidecar/acp/outbound-stream.ts";
import type { OutboundSink } from "../../sidecar/http/outbound-sink.ts";
import { DEFAULT_AGENT_READ_WAIT_MS } from "../../sidecar/limits.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";

/** A socket's stand-in: takes `capacity` messages, then answers "full" until given more room. */
class Sink implements OutboundSink {
  written = 0;
  capacity = 0;
  write(): boolean {
    this.written += 1;
    return this.written < this.capacity;
  }
  end(): void {}
  abort(): void {}
}

const update = (n: number): string => `${JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", n, text: "x".repeat(100) } })}\n`;

/** A reader paced with `maxWaitMs` whose messages all go to `stream`, and when each message arrived. */
function pacedReader(stream: OutboundStream, maxWaitMs: number): { input: PassThrough; arrived: number[] } {
  const input = new PassThrough();
  const pacing = new ReadPacing(maxWaitMs);
  const reader = new NdjsonMessageReader(input, { pacing });
  const arrived: number[] = [];
  reader.listen((message) =>
    pacing.deliver(() => {
      arrived.push(performance.now());
      stream.push(message as unknown as JsonRpcMessage);
    }),
  );
  return { input, arrived };
}

/** Resolves once `count` messages arrived; fails after `deadlineMs`. */
async function arrivals(arrived: number[], count: number, deadlineMs = 10_000): Promise<void> {
  const until = performance.now() + deadlineMs;
  while (arrived.length < count) {
    if (performance.now() > until) throw new Error(`${arrived.length} of ${count} messages within ${deadlineMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A few event-loop turns: what could be read without waiting has been. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A stream past its high-water mark behind a paced reader (a wait bound of a
 * minute): 20 messages of over 100 bytes arrived and stay queued past 1,000
 * bytes on a sink that takes none, and the read of a 21st waits.
 */
async function readWaitingOnBacklog(): Promise<{ stream: OutboundStream; sink: Sink; arrived: number[] }> {
  const stream = new OutboundStream({ maxQueuedMessages: 10_000, maxQueuedBytes: 1 << 24, highWaterBytes: 1_000 });
  const sink = new Sink();
  stream.attach(sink);
  const { input, arrived } = pacedReader(stream, 60_000);
  input.write(update(1).repeat(20));
  await arrivals(arrived, 20);
  input.write(update(2));
  await turns();
  assert.equal(arrived.length, 20, "the second read waits: 20 messages of over 100 bytes are queued past 1,000");
  return { stream, sink, arrived };
}

describe("read pacing", () => {
  it("the next read waits while a stream the last read filled is past its high-water mark, and goes on once its reader took the backlog", async () => {
    const { stream, sink, arrived } = await readWaitingOnBacklog();
    sink.capacity = Number.POSITIVE_INFINITY;
    stream.resume();
    await arrivals(arrived, 21);
    assert.equal(stream.queuedMessages, 0);
  });

  it("a reader that goes away relieves the wait at once", async () => {
    const { stream, sink, arrived } = await readWaitingOnBacklog();
    stream.detach(sink);
    await arrivals(arrived, 21);
  });

  it("a stream that did not drain within the wait is not waited for again: one wait per backlog, not one per read", async () => {
    const waitMs = 300;
    const stream = new OutboundStream({ maxQueuedMessages: 10_000, maxQueuedBytes: 1 << 24, highWaterBytes: 1_000 });
    stream.attach(new Sink());
    const { input, arrived } = pacedReader(stream, waitMs);
    input.write(update(1).repeat(20));
    await arrivals(arrived, 20);
    input.write(update(2));
    await arrivals(arrived, 21);
    assert.ok((arrived[20] as number) - (arrived[19] as number) >= waitMs * 0.9, "the read after the backlog waited for it");
    for (let n = 0; n < 5; n++) {
      input.write(update(3));
      await arrivals(arrived, 22 + n);
    }
    const later = (arrived[25] as number) - (arrived[20] as number);
    assert.ok(later < waitMs, `five more reads took ${Math.round(later)} ms: none waited for the stalled stream again`);
  });

  it("without a backlog, reads go on one per event-loop turn", async () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10_000, maxQueuedBytes: 1 << 24, highWaterBytes: 1_000 });
    const sink = new Sink();
    sink.capacity = Number.POSITIVE_INFINITY;
    stream.attach(sink);
    const { input, arrived } = pacedReader(stream, 60_000);
    for (let n = 1; n <= 5; n++) {
      input.write(update(n).repeat(20));
      await arrivals(arrived, 20 * n);
    }
  });
});

/** A raw h2c client of one ACP connection with one session, whose session stream can be left unread. */
class H2Client {
  readonly #session: http2.ClientHttp2Session;
  readonly #streams: http2.ClientHttp2Stream[] = [];
  connectionId = "";
  sessionId = "";
  /** `data:` payloads of the connection stream and of the session stream, as they came. */
  readonly events = { connection: [] as string[], session: [] as string[] };

  constructor(url: string) {
    this.#session = http2.connect(url);
    this.#session.on("error", () => {});
  }

  async open(token: string, readSession: boolean): Promise<void> {
    const init = await this.post(token, { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
    this.connectionId = String(init["acp-connection-id"]);
    await this.#get(token, undefined, this.events.connection);
    await this.post(token, { jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: tmpdir(), mcpServers: [] } });
    await this.until(() => this.events.connection.some((e) => e.includes('"sessionId"')), "session/new's answer");
    this.sessionId = (JSON.parse(this.events.connection.find((e) => e.includes('"sessionId"')) as string) as { result: { sessionId: string } }).result.sessionId;
    const stream = await this.#get(token, this.sessionId, this.events.session);
    // Not reading: the client's 64 KiB window fills and stays full.
    if (!readSession) stream.pause();
  }

  post(token: string, body: unknown): Promise<http2.IncomingHttpHeaders> {
    const headers: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": "/acp", authorization: `Bearer ${token}`, "content-type": "application/json" };
    if (this.connectionId !== "") headers["acp-connection-id"] = this.connectionId;
    if (this.sessionId !== "") headers["acp-session-id"] = this.sessionId;
    const req = this.#session.request(headers);
    req.end(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      req.on("response", (h) => resolve(h));
      req.on("error", reject);
      req.resume();
    });
  }

  async until(done: () => boolean, what: string, deadlineMs = 30_000): Promise<void> {
    const until = performance.now() + deadlineMs;
    while (!done()) {
      if (performance.now() > until) throw new Error(`no ${what} within ${deadlineMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  close(): void {
    for (const s of this.#streams) s.destroy();
    this.#session.destroy();
  }

  #get(token: string, sessionId: string | undefined, into: string[]): Promise<http2.ClientHttp2Stream> {
    const headers: http2.OutgoingHttpHeaders = { ":method": "GET", ":path": "/acp", authorization: `Bearer ${token}`, accept: "text/event-stream", "acp-connection-id": this.connectionId };
    if (sessionId !== undefined) headers["acp-session-id"] = sessionId;
    const stream = this.#session.request(headers, { endStream: true });
    this.#streams.push(stream);
    let buffer = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const data = buffer.slice(0, end).split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        buffer = buffer.slice(end + 2);
        if (data !== "") into.push(data);
      }
    });
    stream.on("error", () => {});
    return new Promise((resolve, reject) => {
      stream.once("response", (h) => (h[":status"] === 200 ? resolve(stream) : reject(new Error(`GET answered ${h[":status"]}`))));
    });
  }
}

describe("read pacing through the sidecar", () => {
  const TOKEN = "read-pacing-token-0123456789";
  let served: ServedFixture;
  const clients: H2Client[] = [];

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN] });
  });
  after(async () => {
    for (const c of clients) c.close();
    await served?.close();
  });

  it("a client that stops reading a flood holds another session of the same agent back once, for the wait's bound, not until it is cut off", async () => {
    const stalled = new H2Client(served.server.url);
    const other = new H2Client(served.server.url);
    clients.push(stalled, other);
    await stalled.open(TOKEN, false);
    await other.open(TOKEN, true);
    // 20,000 updates of about 300 bytes: far past the stalled stream's window and its high-water mark.
    await stalled.post(TOKEN, { jsonrpc: "2.0", id: 2, method: Acp.agent.session.prompt, params: { sessionId: stalled.sessionId, prompt: [{ type: "text", text: "flood 20000 100" }] } });
    const asked = performance.now();
    // Behind the flood in the agent's pipe: answered once the relay read through it.
    await other.post(TOKEN, { jsonrpc: "2.0", id: 2, method: Acp.agent.session.prompt, params: { sessionId: other.sessionId, prompt: [{ type: "text", text: "echo still here" }] } });
    await other.until(() => other.events.session.some((e) => e.includes('"id":2')), "answer to the other session's prompt");
    const took = performance.now() - asked;
    assert.ok(other.events.session.some((e) => e.includes("still here")), "the other session got its update");
    // A wait per read of the flood (about 90 reads) would take seconds; waiting for the stalled reader, until it is cut off after DEFAULT_OUTBOUND_STALL_MS.
    assert.ok(took < 40 * DEFAULT_AGENT_READ_WAIT_MS, `the other session's turn took ${Math.round(took)} ms`);
  });
});
