// The web client's Streamable HTTP link (web/client/http-transport.ts) when a
// GET stream ends, against a real HTTP server that scripts what /acp answers:
// a server that offers resumable streams gets the stream asked for again with
// Last-Event-ID; one that can no longer resume it (410), or reopens that bring
// no message, end the link so the page loads its session again; a server
// without the offer ends the link at the stream's end, as before.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { openHttp } from "../../web/client/http-transport.ts";
import { DEFAULT_STREAM_RESUMES } from "../../web/client/limits.ts";
import type { LinkEnd, Transport } from "../../web/client/transport.ts";

const WAIT_MS = 10_000;

/** What the scripted server does with the n-th GET stream (0-based) of a connection. */
type StreamScript = (n: number, lastEventId: string | undefined, res: ServerResponse) => void;

interface Run {
  gets: Array<string | undefined>;
  messages: JsonRpcMessage[];
  /** Resolves once `n` messages arrived (rejects after WAIT_MS). */
  received(n: number): Promise<void>;
  closed: Promise<LinkEnd>;
  transport: Transport;
}

const update = (n: number): string => JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { n } } });

describe("the web client's Streamable HTTP streams", () => {
  let server: Server;
  let base: string;
  /** Per connection id: whether initialize offers resumable streams, and what its GET streams do. */
  const scripts = new Map<string, { resumable: boolean; stream: StreamScript; gets: Array<string | undefined> }>();
  let next: { resumable: boolean; stream: StreamScript; gets: Array<string | undefined> } | undefined;
  const transports: Transport[] = [];

  before(async () => {
    let connections = 0;
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method === "POST") {
        req.resume();
        const id = `c${++connections}`;
        const script = next as NonNullable<typeof next>;
        scripts.set(id, script);
        const meta = script.resumable ? { _meta: { acpRemote: { resumableStreams: true } } } : {};
        res.writeHead(200, { "content-type": "application/json", "acp-connection-id": id });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, ...meta } }));
        return;
      }
      const script = scripts.get(String(req.headers["acp-connection-id"]));
      if (req.method !== "GET" || script === undefined) {
        res.writeHead(404).end();
        return;
      }
      const lastEventId = req.headers["last-event-id"];
      script.gets.push(typeof lastEventId === "string" ? lastEventId : undefined);
      script.stream(script.gets.length - 1, typeof lastEventId === "string" ? lastEventId : undefined, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => {
    for (const t of transports) t.close();
    server.closeAllConnections();
    server.close();
  });

  async function run(resumable: boolean, stream: StreamScript): Promise<Run> {
    const gets: Array<string | undefined> = [];
    next = { resumable, stream, gets };
    const messages: JsonRpcMessage[] = [];
    const waiters: Array<{ n: number; resolve: () => void }> = [];
    const received = (n: number): Promise<void> =>
      messages.length >= n
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`${messages.length} of ${n} messages within ${WAIT_MS} ms`)), WAIT_MS);
            waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
          });
    const onMessage = (m: JsonRpcMessage): void => {
      messages.push(m);
      for (const w of waiters.filter((x) => x.n <= messages.length)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    };
    let onClose: (end: LinkEnd) => void = () => {};
    const closed = new Promise<LinkEnd>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the link did not end within ${WAIT_MS} ms`)), WAIT_MS);
      // A link that stays up is the point of some tests: this deadline must not hold the file open.
      timer.unref();
      onClose = (end) => {
        clearTimeout(timer);
        resolve(end);
      };
    });
    closed.catch(() => {});
    const { transport } = await openHttp(
      { base, token: null },
      { onMessage, onClose: (end) => onClose(end) },
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } },
    );
    transports.push(transport);
    return { gets, messages, received, closed, transport };
  }

  const sse = (res: ServerResponse): ServerResponse => res.writeHead(200, { "content-type": "text/event-stream" });

  test("the web client asks for a stream that ended again with Last-Event-ID, and what followed is delivered once", async () => {
    const r = await run(true, (n, _last, res) => {
      if (n === 0) {
        // Cut after the first message: the id of the id-only event, then one of its own.
        sse(res).end(`id: t-0\ndata:\n\nid: t-1\ndata: ${update(1)}\n\n`);
        return;
      }
      sse(res).write(`id: t-2\ndata: ${update(2)}\n\n`);
    });
    await r.received(2);
    assert.deepEqual(r.gets, [undefined, "t-1"]);
    assert.deepEqual(r.messages.map((m) => ("params" in m ? (m.params as { update: { n: number } }).update.n : -1)), [1, 2]);
  });

  test("the web client ends the link, so the page loads its session, when the server can no longer resume a cut stream (410)", async () => {
    const r = await run(true, (n, _last, res) => {
      if (n === 0) sse(res).end("id: t-0\ndata:\n\n");
      else res.writeHead(410, { "content-type": "application/json" }).end("{}");
    });
    assert.equal(await r.closed, "dropped");
    assert.deepEqual(r.gets, [undefined, "t-0"]);
  });

  test("the web client's reopens of a resumable stream that bring no message are bounded by DEFAULT_STREAM_RESUMES", async () => {
    const r = await run(true, (n, _last, res) => {
      sse(res).end(`id: t-${n}\ndata:\n\n`);
    });
    assert.equal(await r.closed, "dropped");
    assert.deepEqual(r.gets, [undefined, ...Array.from({ length: DEFAULT_STREAM_RESUMES }, (_, i) => `t-${i}`)]);
  });

  test("without the offer of resumable streams, a stream's end ends the link", async () => {
    const r = await run(false, (_n, _last, res) => {
      sse(res).end(`data: ${update(1)}\n\n`);
    });
    assert.equal(await r.closed, "dropped");
    assert.deepEqual(r.gets, [undefined]);
    assert.equal(r.messages.length, 1);
  });
});

