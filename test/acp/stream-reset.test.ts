// An HTTP/2 stream its client resets while some of its data still waits for
// the client's flow-control window (RST_STREAM NO_ERROR, what node's and
// undici's clients send when they close a stream) is released by the server:
// an SSE stream can be opened again, an answer's route sees its response
// close, and the client's connection closes when the client closes it. The
// resetting client opens no window at all (SETTINGS_INITIAL_WINDOW_SIZE 0),
// so every byte of its streams is still queued on the server when it resets.
import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { afterEach, before, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import type { FrontDoorRefusal, HttpRequest, HttpResponse, Route } from "../../sidecar/http/types.ts";
import { createClient, isSse } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import { startTransportServer, testTls, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
/** How long the server gets to close a connection whose client closed it, in milliseconds (it takes a few). */
const CLOSE_WAIT_MS = 15_000;
/** What the test route answers: far more than the 0 bytes the resetting client lets through. */
const LARGE_ANSWER_BYTES = 256 * 1024;

/** An HTTP/2 client that opens no flow-control window, on a socket of its own that the test can always destroy. */
function windowlessClient(server: StartedServer): { session: http2.ClientHttp2Session; socket: net.Socket } {
  const url = new URL(server.url);
  const socket =
    server.ca !== undefined
      ? tls.connect({ host: url.hostname, port: Number(url.port), servername: "localhost", ca: server.ca, ALPNProtocols: ["h2"] })
      : net.connect(Number(url.port), url.hostname);
  const session = http2.connect(server.url, { settings: { initialWindowSize: 0 }, createConnection: () => socket });
  session.on("error", () => {});
  return { session, socket };
}

/** Resolves when `emitter` emits `event`; rejects after `timeoutMs`, saying what did not happen. */
async function within(emitter: NodeJS.EventEmitter, event: string, timeoutMs: number, what: string): Promise<void> {
  await once(emitter, event, { signal: AbortSignal.timeout(timeoutMs) }).catch((error: unknown) => {
    throw (error as Error).name === "AbortError" ? new Error(`${what} within ${timeoutMs} ms`) : error;
  });
}

/** Resets the stream as node's client does on close (RST_STREAM NO_ERROR), then closes the connection and waits for the server to close it. */
async function resetAndClose(session: http2.ClientHttp2Session, stream: http2.ClientHttp2Stream): Promise<void> {
  stream.resume();
  stream.close(http2.constants.NGHTTP2_NO_ERROR);
  session.close();
  await within(session, "close", CLOSE_WAIT_MS, "the server did not close the connection whose stream was reset");
}

/** A route that answers every GET with LARGE_ANSWER_BYTES and ends the answer, and records when the response closes. */
function largeAnswerRoute(closed: HttpResponse[]): Route {
  return {
    prefix: "/large",
    handle(_req: HttpRequest, res: HttpResponse) {
      res.once("close", () => closed.push(res));
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(LARGE_ANSWER_BYTES) });
      res.end(Buffer.alloc(LARGE_ANSWER_BYTES, 0x61));
    },
    refuse(_req: HttpRequest, res: HttpResponse, refusal: FrontDoorRefusal) {
      res.writeHead(refusal.status);
      res.end();
    },
  };
}

for (const { protocol, tls: secure } of [
  { protocol: "h2c", tls: false },
  { protocol: "h2", tls: true },
] as const) {
  describe(`an HTTP/2 stream reset by its client while its data waits for the window (${protocol})`, () => {
    let server: StartedServer | undefined;
    let client: ProtocolClient | undefined;
    let windowless: { session: http2.ClientHttp2Session; socket: net.Socket } | undefined;
    const streams: OpenedSse[] = [];

    before(async () => {
      if (secure) await testTls();
    });
    afterEach(async () => {
      for (const s of streams.splice(0)) s.close();
      // The socket itself: a connection the server never closes cannot hold the test.
      windowless?.socket.destroy();
      windowless = undefined;
      await client?.close();
      client = undefined;
      await server?.close();
      server = undefined;
    });

    it("an SSE stream reset while an event waits for the window is released: its connection closes and the stream opens again (not 409)", async () => {
      server = await startTransportServer({ tls: secure });
      const http = createClient(protocol, server.url, server.ca !== undefined ? { ca: server.ca } : {});
      client = http;
      const post = (body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> =>
        http.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE, ...headers }, body: JSON.stringify(body) });
      const initialized = await post({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
      assert.equal(initialized.status, 200, initialized.body);
      const connectionId = String(initialized.headers["acp-connection-id"]);
      const connectionStream = await http.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": connectionId });
      assert.ok(isSse(connectionStream));
      streams.push(connectionStream);
      assert.equal((await post({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } }, { "acp-connection-id": connectionId })).status, 202);
      const { sessionId } = ((await connectionStream.reader.next()) as { result: { sessionId: string } }).result;
      const sessionHeaders = { "acp-connection-id": connectionId, "acp-session-id": sessionId };

      // The session stream, read by a client that lets nothing through.
      windowless = windowlessClient(server);
      const stream = windowless.session.request({ ":method": "GET", ":path": "/acp", ...AUTH, accept: "text/event-stream", ...sessionHeaders });
      const [headers] = (await once(stream, "response")) as [http2.IncomingHttpHeaders];
      assert.equal(headers[":status"], 200);
      // An event for the stream: the server writes it before it answers 202, and it waits for the window.
      const prompt = { jsonrpc: "2.0", id: 2, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text: "echo queued" }] } };
      assert.equal((await post(prompt, sessionHeaders)).status, 202);

      await resetAndClose(windowless.session, stream);
      const reopened = await http.openSse("/acp", { ...AUTH, accept: "text/event-stream", ...sessionHeaders });
      assert.ok(isSse(reopened), `the stream opens again, not ${(reopened as RawResponse).status}: ${(reopened as RawResponse).body}`);
      streams.push(reopened);
    });

    it("an answer that ended with data still queued, reset by its client: the route's response closes and so does the connection", async () => {
      const closedAnswers: HttpResponse[] = [];
      server = await startTransportServer({ tls: secure, routes: [largeAnswerRoute(closedAnswers)] });
      windowless = windowlessClient(server);
      const stream = windowless.session.request({ ":method": "GET", ":path": "/large", ...AUTH });
      const [headers] = (await once(stream, "response")) as [http2.IncomingHttpHeaders];
      assert.equal(headers[":status"], 200);
      assert.equal(closedAnswers.length, 0, "the answer waits for the window");

      await resetAndClose(windowless.session, stream);
      assert.equal(closedAnswers.length, 1, "the route saw its response close");
    });
  });
}
