// The HTTP connection under the Streamable HTTP profile. The spec (Limits, 1)
// wants HTTP/2 so that the POSTs and every GET stream share one TCP connection:
// one `ClientHttp2Session`, reached with TLS ALPN "h2" for https:// and with h2c
// prior knowledge for http://. A server without HTTP/2 (ALPN picks http/1.1, or
// the h2c preface is refused) is still served over HTTP/1.1 with a keep-alive
// agent, one socket per open stream, as the SDK's own client does in Node.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import type { Readable } from "node:stream";
import { ClientTransportError, TransportErrorCode } from "./transport.ts";

export type HttpHeaders = Record<string, string | string[] | undefined>;

export interface HttpAnswer {
  status: number;
  headers: HttpHeaders;
  body: Readable;
}

export interface HttpChannel {
  readonly protocol: "h2" | "http/1.1";
  /** Sends one request; resolves once the answer's headers arrived. */
  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer>;
  /** Called once when the shared connection ends (HTTP/2 only: HTTP/1.1 has no shared connection). */
  onclose?: (error?: Error) => void;
  close(): void;
}

export interface ChannelOptions {
  insecure: boolean;
  ca: string | Buffer | undefined;
  connectTimeoutMs: number;
  pingIntervalMs: number;
  pingTimeoutMs: number;
}

/** Error codes of a server that cannot be reached at all (as opposed to one that speaks no HTTP/2). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "ECONNRESET",
]);

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function unreachable(url: URL, error: unknown): ClientTransportError {
  const reason = error instanceof Error ? error.message : String(error);
  return new ClientTransportError(TransportErrorCode.Unreachable, `cannot reach ${url.origin}: ${reason}`, { cause: error });
}

function hostOf(url: URL): string {
  // URL keeps IPv6 literals in brackets; sockets want them bare.
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Runs `op` with a deadline; `onTimeout` tears down what `op` was waiting on. */
function withTimeout<T>(ms: number, what: string, op: Promise<T>, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`${what} timed out after ${ms} ms`));
    }, ms);
  });
  return Promise.race([op, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Waits until `socket` emits `ready` (its TCP connect, or its TLS handshake)
 * within `timeoutMs`; otherwise the socket is destroyed and the server is
 * unreachable.
 */
async function connected(url: URL, socket: net.Socket, ready: "connect" | "secureConnect", what: string, timeoutMs: number): Promise<void> {
  try {
    await withTimeout(
      timeoutMs,
      what,
      new Promise<void>((resolve, reject) => {
        socket.once(ready, resolve);
        socket.once("error", reject);
      }),
      () => socket.destroy(),
    );
  } catch (error) {
    socket.destroy();
    throw unreachable(url, error);
  }
}

/**
 * Opens the channel to `url`: HTTP/2 when the server speaks it, HTTP/1.1
 * otherwise. Rejects with `Unreachable` when no connection can be made.
 */
export async function openHttpChannel(url: URL, options: ChannelOptions): Promise<HttpChannel> {
  const tlsOptions = { ca: options.ca, rejectUnauthorized: !options.insecure };
  if (url.protocol === "https:") {
    const socket = tls.connect({
      host: hostOf(url),
      port: portOf(url),
      // SNI is for names only (RFC 6066, section 3).
      ...(net.isIP(hostOf(url)) === 0 ? { servername: hostOf(url) } : {}),
      ALPNProtocols: ["h2", "http/1.1"],
      ...tlsOptions,
    });
    await connected(url, socket, "secureConnect", "TLS handshake", options.connectTimeoutMs);
    if (socket.alpnProtocol === "h2") {
      return await openH2(url, socket, options);
    }
    // ALPN chose HTTP/1.1 (or nothing): that server has no HTTP/2.
    socket.destroy();
    return new H1Channel(url, tlsOptions);
  }
  const socket = net.connect({ host: hostOf(url), port: portOf(url) });
  await connected(url, socket, "connect", "TCP connect", options.connectTimeoutMs);
  try {
    return await openH2(url, socket, options);
  } catch (error) {
    if (error instanceof ClientTransportError) throw error;
    // The h2c preface was refused (an HTTP/1.1 server answers 400 and closes).
    return new H1Channel(url, tlsOptions);
  }
}

/** Speaks HTTP/2 on a connected socket; resolves when the server's SETTINGS arrived. */
async function openH2(url: URL, socket: net.Socket | tls.TLSSocket, options: ChannelOptions): Promise<H2Channel> {
  const session = http2.connect(url.origin, { createConnection: () => socket });
  try {
    await withTimeout(
      options.connectTimeoutMs,
      "HTTP/2 handshake",
      new Promise<void>((resolve, reject) => {
        session.once("remoteSettings", () => resolve());
        session.once("error", reject);
        session.once("close", () => reject(new Error("the server closed the connection during the HTTP/2 handshake")));
      }),
      () => session.destroy(),
    );
  } catch (error) {
    session.destroy();
    const code = errorCode(error);
    if (code !== undefined && UNREACHABLE_CODES.has(code) && code !== "ECONNRESET") throw unreachable(url, error);
    throw error instanceof Error ? error : new Error(String(error));
  }
  return new H2Channel(session, options);
}

/**
 * Why the server ended an HTTP/2 connection, for a person: a GOAWAY without
 * an error (NO_ERROR) is a server that restarts or stops, with streams it
 * did not take refused; any other code is an error of the server's.
 */
function goawayReason(code: number): string {
  return code === http2.constants.NGHTTP2_NO_ERROR ? "the server is restarting or shutting down" : `the server ended the connection (HTTP/2 error code ${code})`;
}

/** Whether a stream's error says the server did not take the request: it had sent, or was sending, GOAWAY. */
function refusedByGoaway(error: Error & { code?: string }, stream: http2.ClientHttp2Stream): boolean {
  return error.code === "ERR_HTTP2_GOAWAY_SESSION" || stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
}

class H2Channel implements HttpChannel {
  readonly protocol = "h2";
  onclose?: (error?: Error) => void;
  readonly #session: http2.ClientHttp2Session;
  readonly #pingTimer: NodeJS.Timeout;
  #closed = false;
  /** The code of the server's GOAWAY, once it came: no request is sent after it. */
  #goaway: number | undefined;

  constructor(session: http2.ClientHttp2Session, options: ChannelOptions) {
    this.#session = session;
    let lastError: Error | undefined;
    session.on("error", (error: Error) => {
      lastError = error;
    });
    session.on("goaway", (code: number) => {
      this.#goaway = code;
      lastError ??= new Error(goawayReason(code));
    });
    session.once("close", () => {
      clearInterval(this.#pingTimer);
      if (this.#closed) return;
      this.#closed = true;
      this.onclose?.(lastError ?? new Error("the HTTP/2 connection closed"));
    });
    // Liveness: a network that vanishes without a FIN shows only as pings
    // that stay unanswered (spec: v1 durability, rule 7 — ours to do).
    this.#pingTimer = setInterval(() => {
      if (session.closed || session.destroyed) return;
      const deadline = setTimeout(() => {
        session.destroy(new Error(`no answer to an HTTP/2 ping within ${options.pingTimeoutMs} ms`));
      }, options.pingTimeoutMs);
      deadline.unref();
      const sent = session.ping((error) => {
        clearTimeout(deadline);
        if (error) lastError ??= error;
      });
      if (!sent) clearTimeout(deadline);
    }, options.pingIntervalMs);
    this.#pingTimer.unref();
  }

  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    if (this.#closed || this.#session.destroyed) {
      return Promise.reject(new ClientTransportError(TransportErrorCode.ConnectionLost, "the HTTP/2 connection is closed"));
    }
    if (this.#goaway !== undefined) {
      // Node's own words would be "New streams cannot be created after receiving a GOAWAY".
      return Promise.reject(new ClientTransportError(TransportErrorCode.ConnectionLost, `${goawayReason(this.#goaway)} (${method} not sent)`));
    }
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.#session.request({ ":method": method, ":path": path, ...headers }, { endStream: body === undefined });
      } catch (error) {
        const goaway = (error as { code?: unknown }).code === "ERR_HTTP2_GOAWAY_SESSION";
        const reason = goaway ? `${goawayReason(this.#goaway ?? http2.constants.NGHTTP2_NO_ERROR)} (${method} not sent)` : `the HTTP/2 connection refused a request: ${String(error)}`;
        reject(new ClientTransportError(TransportErrorCode.ConnectionLost, reason, { cause: error }));
        return;
      }
      let answered = false;
      stream.once("response", (h) => {
        answered = true;
        resolve({ status: Number(h[":status"]), headers: h, body: stream });
      });
      stream.once("error", (error: Error) => {
        if (answered) return;
        // "Stream closed with error code NGHTTP2_REFUSED_STREAM" says the same in words of the protocol.
        const reason = refusedByGoaway(error, stream) ? `${goawayReason(this.#goaway ?? http2.constants.NGHTTP2_NO_ERROR)} (${method} not sent)` : `${method} failed: ${error.message}`;
        reject(new ClientTransportError(TransportErrorCode.ConnectionLost, reason, { cause: error }));
      });
      stream.once("close", () => {
        if (!answered) reject(new ClientTransportError(TransportErrorCode.ConnectionLost, `${method} ended before an answer`));
      });
      if (body !== undefined) stream.end(body);
    });
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#pingTimer);
    // Streams still open (the GET streams) are cut; nothing is waiting for them.
    this.#session.destroy();
  }
}

class H1Channel implements HttpChannel {
  readonly protocol = "http/1.1";
  onclose?: (error?: Error) => void;
  readonly #url: URL;
  readonly #agent: http.Agent;
  readonly #requests = new Set<http.ClientRequest>();

  constructor(url: URL, tlsOptions: { ca: string | Buffer | undefined; rejectUnauthorized: boolean }) {
    this.#url = url;
    // Every open GET stream holds its own socket; POSTs reuse idle ones.
    this.#agent =
      url.protocol === "https:"
        ? new https.Agent({ keepAlive: true, ALPNProtocols: ["http/1.1"], ...tlsOptions })
        : new http.Agent({ keepAlive: true });
  }

  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    const send = this.#url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = send({
        agent: this.#agent,
        host: hostOf(this.#url),
        port: portOf(this.#url),
        method,
        path,
        headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      });
      this.#requests.add(req);
      req.once("close", () => this.#requests.delete(req));
      let answered = false;
      req.once("response", (res) => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.once("error", (error) => {
        if (answered) return;
        const code = errorCode(error);
        const kind = code !== undefined && UNREACHABLE_CODES.has(code) && code !== "ECONNRESET" ? TransportErrorCode.Unreachable : TransportErrorCode.ConnectionLost;
        reject(new ClientTransportError(kind, `${method} failed: ${error.message}`, { cause: error }));
      });
      req.end(body);
    });
  }

  close(): void {
    for (const req of this.#requests) req.destroy();
    this.#agent.destroy();
  }
}
