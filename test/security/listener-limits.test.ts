// What one client can hold of the listener is bounded: HTTP/2 streams per
// connection (SETTINGS_MAX_CONCURRENT_STREAMS), the time a request's body may
// take to arrive (408, on HTTP/2 as on HTTP/1.1), the time a WebSocket may
// take to send initialize (1008), and the sockets of the listening port.
// Small limits are given per server; the defaults are asserted as well. A bare
// HTTP/2 frame client (test/helpers/raw-h2.ts) breaks the rules node:http2's
// own client keeps.
import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { afterEach, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import {
  DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
  DEFAULT_MAX_SOCKETS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_WS_INITIALIZE_TIMEOUT_MS,
} from "../../sidecar/limits.ts";
import type { FrontDoorRefusal, HttpRequest, HttpResponse, Route } from "../../sidecar/http/types.ts";
import { DEFAULT_SERVER_LIMITS } from "../../sidecar/http/server-limits.ts";
import type { ServerLimits } from "../../sidecar/http/server-limits.ts";
import { createClient, isSse } from "../helpers/http-clients.ts";
import { FrameType, RawH2Client } from "../helpers/raw-h2.ts";
import type { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";
import { WsTestClient } from "../helpers/ws-client.ts";

/** Time any one awaited event may take before the test fails instead of hanging. */
const DEADLINE_MS = 10_000;
const AUTH = { authorization: `Bearer ${TOKEN}` };
const INITIALIZE = { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };
/** RFC 9113, 7: error codes. */
const H2_NO_ERROR = 0x0;
const H2_PROTOCOL_ERROR = 0x1;
const H2_REFUSED_STREAM = 0x7;

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** The answer is /acp's error: `status`, application/json, a JSON-RPC error response with id null. */
function assertJsonRpcError(answer: { status: number; contentType: unknown; body: string }, status: number): void {
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.contentType, "application/json");
  const body = JSON.parse(answer.body) as { id: unknown; error: { code: number } };
  assert.equal(body.id, null);
  assert.equal(body.error.code, ErrorCode.InvalidRequest);
}

/** Headers of an authenticated POST /acp, as a bare HTTP/2 client sends them. */
function postHeaders(server: StartedServer): Array<[string, string]> {
  return [
    [":method", "POST"],
    [":scheme", "http"],
    [":authority", `127.0.0.1:${server.port}`],
    [":path", "/acp"],
    ["authorization", AUTH.authorization],
    ["content-type", "application/json"],
  ];
}

/** An HTTP/2 request whose body is written but not ended; resolves with its answer and how its stream closed. */
function halfSentH2(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  part: string,
): Promise<{ status: number; contentType: unknown; body: string; rstCode: number | undefined }> {
  const stream = session.request({ ":method": "POST", ...headers });
  stream.write(part);
  return withDeadline(
    new Promise((resolve, reject) => {
      let status = 0;
      let contentType: unknown;
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        contentType = h["content-type"];
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", reject);
      stream.on("close", () => resolve({ status, contentType, body: Buffer.concat(chunks).toString("utf8"), rstCode: stream.rstCode }));
    }),
    "the answer to a half-sent body",
  );
}

/** Connects a bare socket (TLS with ALPN http/1.1 when `secure`) and resolves once it is connected. */
function connectRaw(server: StartedServer, secure: boolean): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = secure
      ? tls.connect({ port: server.port, host: "127.0.0.1", servername: "localhost", ca: server.ca, ALPNProtocols: ["http/1.1"] })
      : net.connect(server.port, "127.0.0.1");
    socket.once(secure ? "secureConnect" : "connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Writes `bytes` on `socket` and resolves with everything received until the server closes it. */
function answerOn(socket: net.Socket, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.once("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(bytes);
  });
}

/** The HTTP/1.1 answer's parts (a Content-Length framed answer). */
function parseAnswer(text: string): { status: number; contentType: unknown; body: string } {
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(0, end);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    contentType: /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1],
    body: text.slice(end + 4),
  };
}

/** A route of its own error format that never reads a body, to see that it answers its requests' 408. */
function stubRoute(refusals: FrontDoorRefusal[]): Route {
  return {
    prefix: "/stub",
    handle(_req: HttpRequest, _res: HttpResponse) {
      // Waits for a body it never reads: only the deadline answers.
    },
    refuse(_req: HttpRequest, res: HttpResponse, refusal: FrontDoorRefusal) {
      refusals.push(refusal);
      const body = `stub: ${refusal.message}`;
      res.writeHead(refusal.status, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    },
  };
}

describe("the listener's limits have defaults", () => {
  let server: StartedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("every listener limit is a named default in sidecar/limits.ts, each in a sensible relation to the others", () => {
    const expected: Partial<ServerLimits> = {
      http2MaxConcurrentStreams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
      maxSockets: DEFAULT_MAX_SOCKETS,
      wsInitializeTimeoutMs: DEFAULT_WS_INITIALIZE_TIMEOUT_MS,
      requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
    };
    for (const [key, value] of Object.entries(expected)) assert.equal(DEFAULT_SERVER_LIMITS[key as keyof ServerLimits], value, key);
    // A person's session streams, the connection stream and requests fit on one HTTP/2 connection.
    assert.ok(DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS > DEFAULT_MAX_SESSIONS_PER_PRINCIPAL + 1);
    // Every transport connection can be a WebSocket (a socket each) with sockets to spare.
    assert.ok(DEFAULT_MAX_SOCKETS > DEFAULT_MAX_CONNECTIONS);
  });

  for (const secure of [false, true]) {
    it(`by default an HTTP/2 connection${secure ? " over TLS" : ""} is offered DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS streams, not an unbounded number`, async () => {
      server = await startTransportServer({ tls: secure });
      const session = http2.connect(server.url, secure ? { ca: server.ca } : {});
      try {
        const settings = await withDeadline(new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve)), "the server's SETTINGS");
        assert.equal(settings.maxConcurrentStreams, DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS);
      } finally {
        session.destroy();
      }
    });
  }
});

describe("HTTP/2 streams per connection are bounded (http2MaxConcurrentStreams)", () => {
  let server: StartedServer;
  let raw: RawH2Client | undefined;
  afterEach(async () => {
    raw?.close();
    raw = undefined;
    await server.close();
  });

  it("streams over the cap that come before the client acknowledged the SETTINGS are refused with RST_STREAM REFUSED_STREAM", async () => {
    server = await startTransportServer({ limits: { http2MaxConcurrentStreams: 4 } });
    raw = await RawH2Client.connect(server.port, { acknowledge: false });
    const ids = Array.from({ length: 6 }, () => raw!.request(postHeaders(server), { endStream: false }));
    assert.equal(await withDeadline(raw.resetCode(ids[4]!), "the fifth stream's reset"), H2_REFUSED_STREAM);
    assert.equal(await withDeadline(raw.resetCode(ids[5]!), "the sixth stream's reset"), H2_REFUSED_STREAM);
    for (const id of ids.slice(0, 4)) assert.ok(!raw.framesOf(id).some((f) => f.type === FrameType.RstStream), `stream ${id} is within the cap`);
  });

  it("a client that opens more streams than the SETTINGS it acknowledged loses its connection (GOAWAY PROTOCOL_ERROR); other clients are served", async () => {
    server = await startTransportServer({ limits: { http2MaxConcurrentStreams: 4 } });
    raw = await RawH2Client.connect(server.port);
    for (let i = 0; i < 5; i += 1) raw.request(postHeaders(server), { endStream: false });
    const goAway = await withDeadline(raw.next((f) => f.type === FrameType.GoAway), "the GOAWAY");
    assert.equal(goAway.payload.readUInt32BE(4), H2_PROTOCOL_ERROR);
    assert.equal(goAway.payload.readUInt32BE(0) & 0x7fffffff, 7, "the four streams within the cap were processed");
    const other = createClient("h2c", server.url);
    try {
      const init = await other.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: JSON.stringify(INITIALIZE) });
      assert.equal(init.status, 200);
    } finally {
      await other.close();
    }
  });

  it("half-sent authenticated streams are answered 408 at requestTimeoutMs and reset, which frees their places under the cap", async () => {
    server = await startTransportServer({ limits: { http2MaxConcurrentStreams: 4, headersTimeoutMs: 200, requestTimeoutMs: 300 } });
    raw = await RawH2Client.connect(server.port);
    for (let round = 0; round < 2; round += 1) {
      const ids = Array.from({ length: 4 }, () => {
        const id = raw!.request(postHeaders(server), { endStream: false });
        raw!.data(id, '{"jsonrpc":"2.0",', { endStream: false });
        return id;
      });
      for (const id of ids) {
        // A complete answer, then RST_STREAM NO_ERROR: stop sending (RFC 9113, 8.1).
        assert.equal(await withDeadline(raw.resetCode(id), `stream ${id}'s reset`), H2_NO_ERROR);
        assert.ok(raw.framesOf(id).some((f) => f.type === FrameType.Headers), `stream ${id} was answered before its reset`);
      }
    }
    assert.ok(!raw.frames.some((f) => f.type === FrameType.GoAway), "the second round fit under the cap: the first one's places were freed");
  });
});

describe("a request body that does not arrive in time is answered 408 (requestTimeoutMs)", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  for (const secure of [false, true]) {
    it(`HTTP/2${secure ? " over TLS" : " (h2c)"}: a POST whose body stops half-way is answered 408 with /acp's JSON error and its stream is reset`, async () => {
      server = await startTransportServer({ tls: secure, limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
      const session = http2.connect(server.url, secure ? { ca: server.ca } : {});
      session.on("error", () => {});
      try {
        const answer = await halfSentH2(session, { ":path": "/acp", ...AUTH, "content-type": "application/json" }, '{"jsonrpc":"2.0",');
        assertJsonRpcError(answer, 408);
        assert.equal(answer.rstCode, H2_NO_ERROR);
      } finally {
        session.destroy();
      }
    });

    it(`HTTP/1.1${secure ? " over TLS" : ""}: a POST whose body stops half-way is answered 408 with a JSON body, not node's bare 408`, async () => {
      server = await startTransportServer({ tls: secure, limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
      const socket = await connectRaw(server, secure);
      const text = await withDeadline(
        answerOn(
          socket,
          `POST /acp HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: ${AUTH.authorization}\r\n` +
            `content-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc":"2.0",`,
        ),
        "the 408",
      );
      assertJsonRpcError(parseAnswer(text), 408);
    });
  }

  it("a message cut at the deadline is not handled as if the part that came were the whole body", async () => {
    server = await startTransportServer({ limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
    const hub = server.hub as TransportHub;
    const client = createClient("h2c", server.url);
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: JSON.stringify(INITIALIZE) });
      const connectionId = String(init.headers["acp-connection-id"]);
      const headers = { ...AUTH, "content-type": "application/json", "acp-connection-id": connectionId };
      // A whole JSON-RPC message, but its stream never ends: the body is not known to be complete.
      const cut = await halfSentH2(session, { ":path": "/acp", ...headers }, JSON.stringify({ jsonrpc: "2.0", method: "_test/cut" }));
      assert.equal(cut.status, 408);
      const whole = await client.request("POST", "/acp", { headers, body: JSON.stringify({ jsonrpc: "2.0", method: "_test/whole" }) });
      assert.equal(whole.status, 202);
      const methods = hub.events.received.map((r) => (r.message as { method?: string }).method);
      assert.ok(methods.includes("_test/whole"));
      assert.ok(!methods.includes("_test/cut"), "the cut message never reached the hub");
    } finally {
      session.destroy();
      await client.close();
    }
  });

  for (const protocol of ["h2c", "http1"] as const) {
    it(`${protocol}: a route answers the 408 of a body that did not arrive, in its own format`, async () => {
      const refusals: FrontDoorRefusal[] = [];
      server = await startTransportServer({ routes: [stubRoute(refusals)], limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
      let answer: { status: number; body: string };
      if (protocol === "h2c") {
        const session = http2.connect(server.url);
        session.on("error", () => {});
        try {
          answer = await halfSentH2(session, { ":path": "/stub/upload" }, "part of a body");
        } finally {
          session.destroy();
        }
      } else {
        const socket = await connectRaw(server, false);
        const text = await withDeadline(
          answerOn(socket, `POST /stub/upload HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\ncontent-length: 100\r\n\r\npart of a body`),
          "the 408",
        );
        answer = parseAnswer(text);
      }
      assert.equal(answer.status, 408);
      assert.deepEqual(refusals.map((r) => r.status), [408]);
      assert.equal(answer.body, `stub: ${refusals[0]?.message}`);
    });
  }

  it("an HTTP/2 SSE stream outlives requestTimeoutMs: the deadline bounds receiving the request, not the answer", async () => {
    server = await startTransportServer({ limits: { headersTimeoutMs: 200, requestTimeoutMs: 300, keepAliveMs: 100 } });
    const client = createClient("h2c", server.url);
    try {
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: JSON.stringify(INITIALIZE) });
      const opened = await client.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": String(init.headers["acp-connection-id"]) });
      assert.ok(isSse(opened));
      // 15 keep-alives 100 ms apart: five deadlines pass.
      await withDeadline(opened.reader.commentsAtLeast(15), "15 keep-alives");
      assert.equal(opened.reader.isEnded, false);
      opened.close();
    } finally {
      await client.close();
    }
  });
});

describe("a WebSocket has wsInitializeTimeoutMs to send initialize", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  it("a WebSocket that never sends initialize is closed with 1008 and a reason, however well it answers pings", async () => {
    server = await startTransportServer({ limits: { wsInitializeTimeoutMs: 300, keepAliveMs: 100 } });
    const client = await WsTestClient.open(server.acpUrl, { headers: AUTH });
    assert.ok(client instanceof WsTestClient);
    const closed = await withDeadline(client.closed, "the close");
    assert.deepEqual(closed, { code: 1008, reason: "initialize was not sent in time" });
  });

  it("a WebSocket that sent initialize in time is not closed by the deadline", async () => {
    server = await startTransportServer({ limits: { wsInitializeTimeoutMs: 200, keepAliveMs: 50 } });
    const client = await WsTestClient.open(server.acpUrl, { headers: AUTH });
    assert.ok(client instanceof WsTestClient);
    try {
      client.send(INITIALIZE);
      assert.equal((await client.next()).id, 0);
      // Ten pings 50 ms apart: the deadline has passed more than twice.
      let pings = 0;
      await withDeadline(
        new Promise<void>((resolve) =>
          client.ws.on("ping", () => {
            pings += 1;
            if (pings === 10) resolve();
          }),
        ),
        "ten pings",
      );
      assert.equal(client.ws.readyState, client.ws.OPEN);
    } finally {
      await client.close();
    }
  });
});

describe("the listening socket holds at most maxSockets sockets", () => {
  let server: StartedServer;
  const held: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of held.splice(0)) socket.destroy();
    await server.close();
  });

  for (const secure of [false, true]) {
    it(`${secure ? "TLS" : "cleartext"}: sockets past maxSockets are closed as soon as they are accepted; the ones inside it are served, and a freed place is taken again`, async () => {
      // A sniff timeout far beyond the test's deadline: a close can only be the cap's.
      server = await startTransportServer({ tls: secure, limits: { maxSockets: 3, sniffTimeoutMs: 60_000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 } });
      for (let i = 0; i < 3; i += 1) held.push(await withDeadline(connectRaw(server, secure), "a socket within the cap"));
      const over = secure
        ? tls.connect({ port: server.port, host: "127.0.0.1", servername: "localhost", ca: server.ca })
        : net.connect(server.port, "127.0.0.1");
      over.on("error", () => {});
      await withDeadline(new Promise((resolve) => over.once("close", resolve)), "the socket over the cap being closed");

      const request = `GET /nowhere HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nconnection: close\r\n\r\n`;
      const first = held.shift()!;
      assert.equal(parseAnswer(await withDeadline(answerOn(first, request), "an answer within the cap")).status, 404);
      // The server may take a moment to see the freed place: a socket it closes at once is tried again.
      const deadline = Date.now() + DEADLINE_MS;
      let status = 0;
      while (status === 0 && Date.now() < deadline) {
        const socket = await connectRaw(server, secure).catch(() => undefined);
        if (socket === undefined) continue;
        status = parseAnswer(await withDeadline(answerOn(socket, request), "an answer in the freed place")).status || 0;
      }
      assert.equal(status, 404, "a socket took the freed place");
    });
  }
});
