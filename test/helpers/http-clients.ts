// One small client surface over each HTTP version the server speaks, so a
// test table can run every row over h2c, h2 (TLS), HTTP/1.1 and HTTP/1.1 over
// TLS. Built on node:http2 and node:http/https, and on undici (HTTP/2 by ALPN
// with allowH2, and h2c with prior knowledge): real clients, real sockets.
// Every request has a deadline: one the server leaves unanswered fails with
// what it was waiting for (the answer's headers, or the rest of its body) and
// the state of its stream, instead of holding its test until the test's own
// timeout, which names nothing.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import type { IncomingHttpHeaders } from "node:http";
import { Agent, H2CClient } from "undici";
import type { Dispatcher } from "undici";
import { SseReader } from "./sse-reader.ts";

export type HttpProtocol = "h2c" | "h2" | "http1" | "https1" | "undici-h2" | "undici-h2c";

/** HTTP versions and whether they need the TLS server. */
export const HTTP_PROTOCOLS: readonly { protocol: HttpProtocol; tls: boolean }[] = [
  { protocol: "h2c", tls: false },
  { protocol: "h2", tls: true },
  { protocol: "http1", tls: false },
  { protocol: "https1", tls: true },
];

/** The same HTTP/2 variants through undici, an HTTP client independent of node:http2. */
export const UNDICI_PROTOCOLS: readonly { protocol: HttpProtocol; tls: boolean }[] = [
  { protocol: "undici-h2", tls: true },
  { protocol: "undici-h2c", tls: false },
];

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * How long a request waits for its answer, in milliseconds: for the headers
 * and then the whole body (for an SSE stream, the headers). Longer than the
 * server's own deadline for receiving a request (DEFAULT_REQUEST_TIMEOUT_MS,
 * whose 408 must arrive first), shorter than a test's timeout.
 */
export const DEFAULT_RESPONSE_TIMEOUT_MS = 60_000;
/** How long closing an HTTP/2 client waits for the server to close the connection before it ends the socket, in milliseconds. */
export const DEFAULT_CLOSE_GRACE_MS = 2_000;

export interface RequestInit {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The deadline of this request, in milliseconds (DEFAULT_RESPONSE_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A request that got no (complete) answer in time: says which request, what it waited for, and the transport's state. */
export class ResponseTimeoutError extends Error {
  constructor(request: string, waitingFor: string, timeoutMs: number, state: string) {
    super(`${request}: no ${waitingFor} within ${timeoutMs} ms (${state})`);
    this.name = "ResponseTimeoutError";
  }
}

/** The request in a failure message: method, path, the ACP ids it names, the start of its body. */
function describeRequest(protocol: HttpProtocol, method: string, path: string, init: RequestInit): string {
  const ids = ["acp-connection-id", "acp-session-id"]
    .filter((name) => init.headers?.[name] !== undefined)
    .map((name) => `${name}: ${init.headers?.[name]}`);
  const body = init.body === undefined ? "" : ` ${String(init.body).slice(0, 120)}`;
  return `${protocol} ${method} ${path}${ids.length > 0 ? ` [${ids.join(", ")}]` : ""}${body}`;
}

/**
 * `work` raced against the deadline: past it, `abandon` ends the request on
 * the wire and the result rejects with ResponseTimeoutError. `phase` names
 * what is awaited now, `state` describes the transport when time runs out.
 */
async function withDeadline<T>(
  request: string,
  timeoutMs: number,
  phase: () => string,
  state: () => string,
  abandon: () => void,
  work: Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ResponseTimeoutError(request, phase(), timeoutMs, state());
      abandon();
      reject(error);
    }, timeoutMs);
  });
  // Abandoning makes `work` reject as well; that rejection is the deadline's, already reported.
  work.catch(() => {});
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

export interface OpenedSse {
  status: number;
  headers: IncomingHttpHeaders;
  reader: SseReader;
  close(): void;
}

export interface ProtocolClient {
  readonly protocol: HttpProtocol;
  request(method: string, path: string, init?: RequestInit): Promise<RawResponse>;
  /** A GET that stays open: the SSE reader when the answer is 200, the whole answer otherwise (the deadline bounds the headers, and the body of an answer other than 200). */
  openSse(path: string, headers: Record<string, string>, timeoutMs?: number): Promise<OpenedSse | RawResponse>;
  close(): Promise<void>;
}

export function jsonOf(response: RawResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}

export function isSse(value: OpenedSse | RawResponse): value is OpenedSse {
  return "reader" in value;
}

/** The body as text; `progress` counts the bytes as they come (for a deadline's report). */
async function collect(stream: AsyncIterable<Buffer | string>, progress: { bytes: number } = { bytes: 0 }): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    progress.bytes += bytes.length;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** What a request waits for now, for a deadline's report. */
class Progress {
  bytes = 0;
  status: number | undefined;
  get waitingFor(): string {
    return this.status === undefined ? "response headers" : `end of the ${this.status} response's body (${this.bytes} bytes came)`;
  }
}

class Http2Client implements ProtocolClient {
  readonly protocol: HttpProtocol;
  readonly #session: http2.ClientHttp2Session;
  /** The connection's socket, the client's own: close() can always end it. */
  readonly #socket: net.Socket;
  /** The server's GOAWAY, when one came. */
  #goaway: string | undefined;

  constructor(protocol: HttpProtocol, baseUrl: string, ca: string | undefined) {
    this.protocol = protocol;
    const url = new URL(baseUrl);
    const port = Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    this.#socket =
      url.protocol === "https:"
        ? tls.connect({ host, port, ALPNProtocols: ["h2"], ...(ca !== undefined ? { ca } : {}), ...(net.isIP(host) === 0 ? { servername: host } : {}) })
        : net.connect(port, host);
    this.#socket.on("error", () => {});
    this.#session = http2.connect(baseUrl, { createConnection: () => this.#socket });
    this.#session.on("error", () => {});
    this.#session.on("goaway", (code, lastStreamId) => {
      this.#goaway = `GOAWAY code ${code}, last stream ${lastStreamId}`;
    });
  }

  /** The session's and the stream's state when a deadline passes. */
  #state(stream: http2.ClientHttp2Stream | undefined): string {
    const session = this.#session;
    const parts = [`session ${session.destroyed ? "destroyed" : session.closed ? "closed" : "open"}${this.#goaway !== undefined ? ` after ${this.#goaway}` : ""}`];
    if (!session.destroyed) {
      const s = session.state;
      parts.push(`session window local ${s.effectiveLocalWindowSize} remote ${s.remoteWindowSize}, outbound queue ${s.outboundQueueSize}`);
    }
    if (stream === undefined) return parts.join("; ");
    const id = stream.id === undefined ? "not sent yet" : `id ${stream.id}`;
    let flow = "";
    if (!stream.destroyed) {
      const s = stream.state;
      flow = `, state ${s.state}, local close ${s.localClose}, remote close ${s.remoteClose}, window ${s.localWindowSize}`;
    }
    parts.push(`stream ${id}, ${stream.destroyed ? `destroyed (code ${stream.rstCode})` : stream.closed ? `closed (code ${stream.rstCode})` : "open"}${flow}`);
    return parts.join("; ");
  }

  #start(method: string, path: string, init: RequestInit): http2.ClientHttp2Stream {
    const stream = this.#session.request({ ":method": method, ":path": path, ...init.headers }, { endStream: init.body === undefined });
    if (init.body !== undefined) stream.end(init.body);
    return stream;
  }

  #response(stream: http2.ClientHttp2Stream): Promise<{ status: number; headers: IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      stream.once("response", (headers) => resolve({ status: Number(headers[":status"]), headers: headers as IncomingHttpHeaders }));
      stream.once("error", reject);
      // A stream refused or reset without an error (GOAWAY, RST_STREAM NO_ERROR) only closes.
      stream.once("close", () => reject(new Error(`HTTP/2 stream closed before a response (code ${stream.rstCode})`)));
    });
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const stream = this.#start(method, path, init);
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, method, path, init),
      init.timeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
      () => progress.waitingFor,
      () => this.#state(stream),
      () => stream.close(http2.constants.NGHTTP2_CANCEL),
      (async () => {
        const { status, headers } = await this.#response(stream);
        progress.status = status;
        return { status, headers, body: await collect(stream, progress) };
      })(),
    );
  }

  async openSse(path: string, headers: Record<string, string>, timeoutMs = DEFAULT_RESPONSE_TIMEOUT_MS): Promise<OpenedSse | RawResponse> {
    const stream = this.#start("GET", path, { headers });
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, "GET", path, { headers }),
      timeoutMs,
      () => progress.waitingFor,
      () => this.#state(stream),
      () => stream.close(http2.constants.NGHTTP2_CANCEL),
      (async (): Promise<OpenedSse | RawResponse> => {
        const { status, headers: responseHeaders } = await this.#response(stream);
        progress.status = status;
        if (status !== 200) return { status, headers: responseHeaders, body: await collect(stream, progress) };
        stream.on("error", () => {});
        return { status, headers: responseHeaders, reader: new SseReader(stream), close: () => stream.close() };
      })(),
    );
  }

  /**
   * Closes the connection (GOAWAY), and ends the socket if the server has
   * not closed it after DEFAULT_CLOSE_GRACE_MS: once a session has been
   * closed, node's own destroy waits for the server to close the socket.
   */
  close(): Promise<void> {
    const socket = this.#socket;
    return new Promise((resolve) => {
      if (socket.closed) return resolve();
      const timer = setTimeout(() => socket.destroy(), DEFAULT_CLOSE_GRACE_MS);
      socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      if (!this.#session.closed && !this.#session.destroyed) this.#session.close();
    });
  }
}

class Http1Client implements ProtocolClient {
  readonly protocol: HttpProtocol;
  readonly #baseUrl: string;
  readonly #ca: string | undefined;
  readonly #agent: http.Agent;
  readonly #open = new Set<http.ClientRequest>();

  constructor(protocol: HttpProtocol, baseUrl: string, ca: string | undefined) {
    this.protocol = protocol;
    this.#baseUrl = baseUrl;
    this.#ca = ca;
    this.#agent = protocol === "https1" ? new https.Agent({ keepAlive: true, ca, ALPNProtocols: ["http/1.1"] }) : new http.Agent({ keepAlive: true });
  }

  #start(method: string, path: string, init: RequestInit): { req: http.ClientRequest; response: Promise<http.IncomingMessage> } {
    const url = new URL(path, this.#baseUrl);
    const lib = this.protocol === "https1" ? https : http;
    let req!: http.ClientRequest;
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      req = lib.request(url, { method, headers: init.headers, agent: this.#agent, ...(this.#ca !== undefined ? { ca: this.#ca } : {}) }, resolve);
      this.#open.add(req);
      req.once("close", () => this.#open.delete(req));
      req.once("error", reject);
      req.end(init.body);
    });
    return { req, response };
  }

  /** The request's socket when a deadline passes. */
  static #state(req: http.ClientRequest): string {
    const socket = req.socket;
    const where = socket === null ? "no socket assigned" : `socket ${socket.destroyed ? "destroyed" : "open"}${req.reusedSocket ? " (reused)" : ""}, ${socket.bytesWritten} bytes written`;
    return `${where}, request ${req.writableFinished ? "sent" : "still being sent"}`;
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const { req, response } = this.#start(method, path, init);
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, method, path, init),
      init.timeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
      () => progress.waitingFor,
      () => Http1Client.#state(req),
      () => req.destroy(),
      (async () => {
        const res = await response;
        progress.status = res.statusCode ?? 0;
        return { status: progress.status, headers: res.headers, body: await collect(res, progress) };
      })(),
    );
  }

  async openSse(path: string, headers: Record<string, string>, timeoutMs = DEFAULT_RESPONSE_TIMEOUT_MS): Promise<OpenedSse | RawResponse> {
    const { req, response } = this.#start("GET", path, { headers });
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, "GET", path, { headers }),
      timeoutMs,
      () => progress.waitingFor,
      () => Http1Client.#state(req),
      () => req.destroy(),
      (async (): Promise<OpenedSse | RawResponse> => {
        const res = await response;
        const status = res.statusCode ?? 0;
        progress.status = status;
        if (status !== 200) return { status, headers: res.headers, body: await collect(res, progress) };
        res.on("error", () => {});
        return { status, headers: res.headers, reader: new SseReader(res), close: () => req.destroy() };
      })(),
    );
  }

  async close(): Promise<void> {
    for (const req of this.#open) req.destroy();
    this.#agent.destroy();
  }
}

class UndiciClient implements ProtocolClient {
  readonly protocol: HttpProtocol;
  readonly #origin: string;
  readonly #dispatcher: Dispatcher;

  constructor(protocol: HttpProtocol, baseUrl: string, ca: string | undefined) {
    this.protocol = protocol;
    this.#origin = baseUrl;
    this.#dispatcher =
      protocol === "undici-h2c"
        ? new H2CClient(baseUrl, { pipelining: 100 })
        : new Agent({ allowH2: true, connect: ca !== undefined ? { ca, servername: "localhost" } : {} });
  }

  #start(method: string, path: string, init: RequestInit, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.#dispatcher.request({
      origin: this.#origin,
      path,
      method: method as Dispatcher.HttpMethod,
      headers: init.headers ?? {},
      signal,
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const abort = new AbortController();
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, method, path, init),
      init.timeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
      () => progress.waitingFor,
      () => "undici",
      () => abort.abort(),
      (async () => {
        const response = await this.#start(method, path, init, abort.signal);
        progress.status = response.statusCode;
        return { status: response.statusCode, headers: response.headers as IncomingHttpHeaders, body: await collect(response.body, progress) };
      })(),
    );
  }

  async openSse(path: string, headers: Record<string, string>, timeoutMs = DEFAULT_RESPONSE_TIMEOUT_MS): Promise<OpenedSse | RawResponse> {
    const abort = new AbortController();
    const progress = new Progress();
    return withDeadline(
      describeRequest(this.protocol, "GET", path, { headers }),
      timeoutMs,
      () => progress.waitingFor,
      () => "undici",
      () => abort.abort(),
      (async (): Promise<OpenedSse | RawResponse> => {
        const response = await this.#start("GET", path, { headers }, abort.signal);
        const status = response.statusCode;
        progress.status = status;
        const responseHeaders = response.headers as IncomingHttpHeaders;
        if (status !== 200) return { status, headers: responseHeaders, body: await collect(response.body, progress) };
        response.body.on("error", () => {});
        return { status, headers: responseHeaders, reader: new SseReader(response.body), close: () => response.body.destroy() };
      })(),
    );
  }

  close(): Promise<void> {
    return this.#dispatcher.destroy();
  }
}

export function createClient(protocol: HttpProtocol, baseUrl: string, options: { ca?: string } = {}): ProtocolClient {
  switch (protocol) {
    case "h2c":
    case "h2":
      return new Http2Client(protocol, baseUrl, options.ca);
    case "undici-h2":
    case "undici-h2c":
      return new UndiciClient(protocol, baseUrl, options.ca);
    default:
      return new Http1Client(protocol, baseUrl, options.ca);
  }
}
