// Every refusal on /acp is a JSON-RPC error object with id null, as
// application/json (docs/transport.md, "Error bodies"), including the ones
// `ws` and node:http would write themselves: a WebSocket handshake `ws` cannot
// take up (its text/html 400 and 405), an `Expect` other than 100-continue
// (node's bare 417), and bytes node's HTTP/1.1 parser refuses (its bare 400,
// 408 and 431). Raw sockets write exactly the malformed bytes; node:http2 is
// the HTTP/2 client.
import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { after, afterEach, before, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import type { HttpRequest, HttpResponse, FrontDoorRefusal, Route } from "../../sidecar/http/types.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";

/** Time any one awaited event may take before the test fails instead of hanging. */
const DEADLINE_MS = 10_000;
/** RFC 6455, 1.3: a valid Sec-WebSocket-Key. */
const GOOD_KEY = "dGhlIHNhbXBsZSBub25jZQ==";
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: Acp.agent.initialize,
  params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} },
});

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits an HTTP/1.1 answer (Content-Length framed, as every refusal here is). */
function parseAnswer(text: string): RawAnswer {
  const end = text.indexOf("\r\n\r\n");
  assert.notEqual(end, -1, `a complete head in ${JSON.stringify(text)}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1]);
  return { status, headers, body: text.slice(end + 4) };
}

/** Writes `bytes` on a fresh socket and resolves with what came back once the server closed it. */
function exchange(server: StartedServer, bytes: string, options: { tls?: boolean } = {}): Promise<RawAnswer> {
  return withDeadline(
    new Promise((resolve, reject) => {
      const socket = options.tls
        ? tls.connect({ port: server.port, host: "127.0.0.1", servername: "localhost", ca: server.ca, ALPNProtocols: ["http/1.1"] })
        : net.connect(server.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.on(options.tls ? "secureConnect" : "connect", () => socket.write(bytes));
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("error", reject);
      socket.on("close", () => resolve(parseAnswer(Buffer.concat(chunks).toString("latin1"))));
    }),
    "the answer",
  );
}

/** The answer is /acp's error: `status`, application/json, a JSON-RPC error response with id null and `code`. */
function assertJsonRpcError(answer: { status: number; headers: Record<string, string | string[] | undefined>; body: string }, status: number, code: number = ErrorCode.InvalidRequest): void {
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.headers["content-type"], "application/json");
  const body = JSON.parse(answer.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, null);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, "string");
}

function handshake(server: StartedServer, lines: Record<string, string>, method = "GET", path = "/acp"): string {
  const headers = {
    host: `127.0.0.1:${server.port}`,
    authorization: `Bearer ${TOKEN}`,
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": GOOD_KEY,
    ...lines,
  };
  const head = Object.entries(headers)
    .filter(([, value]) => value !== "")
    .map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${head.join("\r\n")}\r\n\r\n`;
}

describe("WebSocket handshakes ws would refuse in text/html are refused with /acp's JSON error", () => {
  let server: StartedServer;
  before(async () => {
    server = await startTransportServer();
  });
  after(async () => {
    await server.close();
  });

  it("a malformed Sec-WebSocket-Key is answered 400 with a JSON-RPC error body, not ws's text/html", async () => {
    assertJsonRpcError(await exchange(server, handshake(server, { "sec-websocket-key": "not-a-key" })), 400);
  });

  it("a missing Sec-WebSocket-Key is answered 400 with a JSON-RPC error body", async () => {
    assertJsonRpcError(await exchange(server, handshake(server, { "sec-websocket-key": "" })), 400);
  });

  it("an unsupported Sec-WebSocket-Version is answered 400 in JSON and names the versions the server speaks (RFC 6455, 4.4)", async () => {
    const answer = await exchange(server, handshake(server, { "sec-websocket-version": "7" }));
    assertJsonRpcError(answer, 400);
    assert.equal(answer.headers["sec-websocket-version"], "13, 8");
  });

  it("a WebSocket upgrade with a method other than GET is answered 405 in JSON with Allow: GET, not ws's text/html", async () => {
    const answer = await exchange(server, handshake(server, {}, "POST"));
    assertJsonRpcError(answer, 405);
    assert.equal(answer.headers["allow"], "GET");
  });

  it("an upgrade to another protocol than websocket on /acp (h2c) is answered 400 in JSON", async () => {
    assertJsonRpcError(await exchange(server, handshake(server, { upgrade: "h2c" })), 400);
  });

  it("a malformed Sec-WebSocket-Protocol list, which ws itself refuses, is answered 400 in JSON", async () => {
    assertJsonRpcError(await exchange(server, handshake(server, { "sec-websocket-protocol": "chat, chat" })), 400);
  });

  it("a well-formed handshake still opens: 101", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    const head = await withDeadline(
      new Promise<string>((resolve, reject) => {
        socket.on("connect", () => socket.write(handshake(server, {})));
        socket.once("data", (c: Buffer) => resolve(c.toString("latin1")));
        socket.on("error", reject);
      }),
      "the 101",
    );
    socket.destroy();
    assert.match(head, /^HTTP\/1\.1 101 /);
  });

  it("a refused handshake's socket is closed even when the client keeps its side open", async () => {
    // The client never ends its side (allowHalfOpen); once the answer is in,
    // what it writes finds a closed socket (a reset) only if the server closed
    // it, rather than only ending its own side.
    const socket = net.connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true });
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    // Without a token: the refusal is the server's own (401), wherever the handshake is checked.
    socket.on("connect", () => socket.write(handshake(server, { authorization: "" })));
    await withDeadline(new Promise((resolve) => socket.once("end", resolve)), "the answer's end");
    assertJsonRpcError(parseAnswer(Buffer.concat(chunks).toString("latin1")), 401, ErrorCode.AuthRequired);
    const poke = setInterval(() => socket.write("x"), 20);
    try {
      await withDeadline(new Promise((resolve) => socket.once("close", resolve)), "the server closing the refused socket");
    } finally {
      clearInterval(poke);
      socket.destroy();
    }
  });
});

describe("an Expect other than 100-continue is answered 417 with a JSON body, not node's bare 417", () => {
  const refusals: FrontDoorRefusal[] = [];
  /** A route of its own format, to see that it gets to answer its requests' 417. */
  const stub: Route = {
    prefix: "/stub",
    handle(_req: HttpRequest, res: HttpResponse) {
      res.writeHead(204);
      res.end();
    },
    refuse(_req: HttpRequest, res: HttpResponse, refusal: FrontDoorRefusal) {
      refusals.push(refusal);
      const body = `stub: ${refusal.message}`;
      res.writeHead(refusal.status, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    },
  };
  let server: StartedServer;
  afterEach(async () => {
    await server?.close();
  });

  const post = (s: StartedServer, expect: string, path = "/acp"): string =>
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${s.port}\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\n` +
    `expect: ${expect}\r\ncontent-length: ${INITIALIZE.length}\r\nconnection: close\r\n\r\n${INITIALIZE}`;

  it("HTTP/1.1: Expect: fancy-extension on /acp is 417 with a JSON-RPC error body", async () => {
    server = await startTransportServer();
    assertJsonRpcError(await exchange(server, post(server, "fancy-extension")), 417);
  });

  it("HTTP/1.1 over TLS (the secure server's own HTTP/1.1): 417 with a JSON-RPC error body", async () => {
    server = await startTransportServer({ tls: true });
    assertJsonRpcError(await exchange(server, post(server, "fancy-extension"), { tls: true }), 417);
  });

  it("HTTP/2: expect: fancy-extension on /acp is 417 with a JSON-RPC error body", async () => {
    server = await startTransportServer();
    const session = http2.connect(server.url);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/acp",
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        expect: "fancy-extension",
      });
      stream.end(INITIALIZE);
      const answer = await withDeadline(
        new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
          let status = 0;
          let headers: Record<string, string | string[] | undefined> = {};
          const chunks: Buffer[] = [];
          stream.on("response", (h) => {
            status = Number(h[":status"]);
            headers = h;
          });
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => resolve({ status, headers, body: Buffer.concat(chunks).toString("utf8") }));
          stream.on("error", reject);
        }),
        "the HTTP/2 answer",
      );
      assertJsonRpcError(answer, 417);
    } finally {
      session.destroy();
    }
  });

  it("Expect: 100-continue is still met: 100, then the request is served", async () => {
    server = await startTransportServer();
    const socket = net.connect(server.port, "127.0.0.1");
    const text = await withDeadline(
      new Promise<string>((resolve, reject) => {
        let received = "";
        socket.on("connect", () =>
          socket.write(
            `POST /acp HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\n` +
              `expect: 100-continue\r\ncontent-length: ${INITIALIZE.length}\r\nconnection: close\r\n\r\n`,
          ),
        );
        socket.on("data", (c: Buffer) => {
          received += c.toString("latin1");
          if (received.startsWith("HTTP/1.1 100 ") && received.endsWith("\r\n\r\n") && !received.includes(" 200 ")) socket.write(INITIALIZE);
        });
        socket.on("close", () => resolve(received));
        socket.on("error", reject);
      }),
      "the answer",
    );
    assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it("a route answers an unmet Expect in its own format", async () => {
    server = await startTransportServer({ routes: [stub] });
    const answer = await exchange(server, post(server, "fancy-extension", "/stub/x"));
    assert.equal(answer.status, 417);
    assert.equal(answer.body, `stub: ${refusals.at(-1)?.message}`);
    assert.equal(refusals.at(-1)?.status, 417);
  });
});

describe("what node's HTTP/1.1 parser refuses is answered with a JSON body, not its bare status", () => {
  let server: StartedServer;
  before(async () => {
    server = await startTransportServer({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
  });
  after(async () => {
    await server.close();
  });

  it("bytes that are no HTTP request are answered 400 with a JSON-RPC error body", async () => {
    assertJsonRpcError(await exchange(server, "HELLO THERE\r\n\r\n"), 400);
  });

  it("request headers larger than node accepts are answered 431 with a JSON-RPC error body", async () => {
    const big = "a".repeat(64 * 1024);
    assertJsonRpcError(await exchange(server, `GET /acp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${big}\r\n\r\n`), 431);
  });

  it("headers that do not arrive within headersTimeoutMs are answered 408 with a JSON-RPC error body", async () => {
    assertJsonRpcError(await exchange(server, "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "), 408);
  });

  it("over TLS too: bytes that are no HTTP request are answered 400 in JSON", async () => {
    const secure = await startTransportServer({ tls: true });
    try {
      assertJsonRpcError(await exchange(secure, "HELLO THERE\r\n\r\n", { tls: true }), 400);
    } finally {
      await secure.close();
    }
  });
});
