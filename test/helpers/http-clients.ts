// One small client surface over each HTTP version the server speaks, so a
// test table can run every row over h2c, h2 (TLS), HTTP/1.1 and HTTP/1.1 over
// TLS. Built on node:http2 and node:http/https, and on undici (HTTP/2 by ALPN
// with allowH2, and h2c with prior knowledge): real clients, real sockets.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
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

export interface RequestInit {
  headers?: Record<string, string>;
  body?: string | Buffer;
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
  /** A GET that stays open: the SSE reader when the answer is 200, the whole answer otherwise. */
  openSse(path: string, headers: Record<string, string>): Promise<OpenedSse | RawResponse>;
  close(): Promise<void>;
}

export function jsonOf(response: RawResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}

export function isSse(value: OpenedSse | RawResponse): value is OpenedSse {
  return "reader" in value;
}

async function collect(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

class Http2Client implements ProtocolClient {
  readonly protocol: HttpProtocol;
  readonly #session: http2.ClientHttp2Session;

  constructor(protocol: HttpProtocol, baseUrl: string, ca: string | undefined) {
    this.protocol = protocol;
    this.#session = http2.connect(baseUrl, ca === undefined ? {} : { ca });
    this.#session.on("error", () => {});
  }

  #start(method: string, path: string, init: RequestInit): Promise<{ stream: http2.ClientHttp2Stream; status: number; headers: IncomingHttpHeaders }> {
    const stream = this.#session.request({ ":method": method, ":path": path, ...init.headers }, { endStream: init.body === undefined });
    if (init.body !== undefined) stream.end(init.body);
    return new Promise((resolve, reject) => {
      stream.once("response", (headers) => {
        const status = Number(headers[":status"]);
        resolve({ stream, status, headers: headers as IncomingHttpHeaders });
      });
      stream.once("error", reject);
      // A stream refused or reset without an error (GOAWAY, RST_STREAM NO_ERROR) only closes.
      stream.once("close", () => reject(new Error(`HTTP/2 stream closed before a response (code ${stream.rstCode})`)));
    });
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const { stream, status, headers } = await this.#start(method, path, init);
    return { status, headers, body: await collect(stream) };
  }

  async openSse(path: string, headers: Record<string, string>): Promise<OpenedSse | RawResponse> {
    const { stream, status, headers: responseHeaders } = await this.#start("GET", path, { headers });
    if (status !== 200) return { status, headers: responseHeaders, body: await collect(stream) };
    stream.on("error", () => {});
    return { status, headers: responseHeaders, reader: new SseReader(stream), close: () => stream.close() };
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#session.closed || this.#session.destroyed) return resolve();
      const timer = setTimeout(() => this.#session.destroy(), 2_000);
      this.#session.close(() => {
        clearTimeout(timer);
        resolve();
      });
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

  #start(method: string, path: string, init: RequestInit): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    const url = new URL(path, this.#baseUrl);
    const lib = this.protocol === "https1" ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers: init.headers, agent: this.#agent, ...(this.#ca !== undefined ? { ca: this.#ca } : {}) }, (res) =>
        resolve({ req, res }),
      );
      this.#open.add(req);
      req.once("close", () => this.#open.delete(req));
      req.once("error", reject);
      req.end(init.body);
    });
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const { res } = await this.#start(method, path, init);
    return { status: res.statusCode ?? 0, headers: res.headers, body: await collect(res) };
  }

  async openSse(path: string, headers: Record<string, string>): Promise<OpenedSse | RawResponse> {
    const { req, res } = await this.#start("GET", path, { headers });
    const status = res.statusCode ?? 0;
    if (status !== 200) return { status, headers: res.headers, body: await collect(res) };
    res.on("error", () => {});
    return { status, headers: res.headers, reader: new SseReader(res), close: () => req.destroy() };
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

  #start(method: string, path: string, init: RequestInit): Promise<Dispatcher.ResponseData> {
    return this.#dispatcher.request({
      origin: this.#origin,
      path,
      method: method as Dispatcher.HttpMethod,
      headers: init.headers ?? {},
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  }

  async request(method: string, path: string, init: RequestInit = {}): Promise<RawResponse> {
    const response = await this.#start(method, path, init);
    return { status: response.statusCode, headers: response.headers as IncomingHttpHeaders, body: await response.body.text() };
  }

  async openSse(path: string, headers: Record<string, string>): Promise<OpenedSse | RawResponse> {
    const response = await this.#start("GET", path, { headers });
    const status = response.statusCode;
    const responseHeaders = response.headers as IncomingHttpHeaders;
    if (status !== 200) return { status, headers: responseHeaders, body: await response.body.text() };
    response.body.on("error", () => {});
    return { status, headers: responseHeaders, reader: new SseReader(response.body), close: () => response.body.destroy() };
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
