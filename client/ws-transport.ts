// WebSocket profile (spec: "GET /acp with Upgrade: websocket"): one upgrade,
// the 101 carries `Acp-Connection-Id`, then every message is one text frame in
// either direction; binary frames are ignored. The first message is initialize.
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import { Header } from "../protocol/acp.ts";
import { validateMessage, type JsonRpcMessage } from "../protocol/jsonrpc.ts";
import {
  DEFAULT_CLIENT_CLOSE_TIMEOUT_MS,
  DEFAULT_CLIENT_CONNECT_TIMEOUT_MS,
  DEFAULT_CLIENT_ERROR_BODY_BYTES,
  DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
  DEFAULT_CLIENT_PING_MS,
  DEFAULT_CLIENT_PING_TIMEOUT_MS,
} from "./limits.ts";
import { CookieJar } from "./cookies.ts";
import { endpointUrl } from "./http-answer.ts";
import { httpStatusError, ClientTransportError, TransportErrorCode, type ClientTransport, type TransportOptions } from "./transport.ts";

/** Close code the client sends when it ends the connection on purpose (RFC 6455, 7.4.1). */
const NORMAL_CLOSURE = 1000;

function readLimited(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (chunk: Buffer) => {
      if (size < max) chunks.push(chunk.subarray(0, max - size));
      size += chunk.length;
    });
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

export class WebSocketTransport implements ClientTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: (error?: ClientTransportError) => void;
  readonly protocol = "websocket";

  readonly #url: URL;
  readonly #options: TransportOptions;
  readonly #jar: CookieJar;
  readonly #ownsJar: boolean;
  #socket: WebSocket | undefined;
  #connectionId: string | undefined;
  #closing = false;
  #ended = false;

  constructor(url: string | URL, options: TransportOptions = {}) {
    this.#url = endpointUrl(url);
    this.#options = options;
    this.#jar = options.cookies ?? new CookieJar();
    this.#ownsJar = options.cookies === undefined;
  }

  get connectionId(): string | undefined {
    return this.#connectionId;
  }

  async start(): Promise<void> {
    if (this.#socket !== undefined) return;
    const wsUrl = new URL(this.#url);
    wsUrl.protocol = this.#url.protocol === "https:" ? "wss:" : "ws:";
    const headers: Record<string, string> = { ...this.#options.headers };
    if (this.#options.token !== undefined) headers[Header.Authorization] = `Bearer ${this.#options.token}`;
    const cookie = this.#jar.header(this.#url);
    if (cookie !== undefined) headers[Header.Cookie] = cookie;
    const socket = new WebSocket(wsUrl, {
      headers,
      handshakeTimeout: this.#options.connectTimeoutMs ?? DEFAULT_CLIENT_CONNECT_TIMEOUT_MS,
      maxPayload: this.#options.maxMessageBytes ?? DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
      rejectUnauthorized: !(this.#options.insecure ?? false),
      ...(this.#options.ca !== undefined ? { ca: this.#options.ca } : {}),
      // ws would follow no redirects anyway; say so.
      followRedirects: false,
      perMessageDeflate: false,
    });
    this.#socket = socket;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (error: ClientTransportError) => {
        if (settled) return;
        settled = true;
        this.#ended = true;
        socket.terminate();
        reject(error);
      };
      socket.once("upgrade", (res: IncomingMessage) => {
        // Spec: the 101 carries Acp-Connection-Id; rule 6: its cookies count too.
        const id = res.headers[Header.ConnectionId];
        this.#connectionId = Array.isArray(id) ? id[0] : id;
        this.#jar.store(this.#url, res.headers[Header.SetCookie]);
      });
      socket.once("unexpected-response", (_req, res: IncomingMessage) => {
        this.#jar.store(this.#url, res.headers[Header.SetCookie]);
        void readLimited(res, DEFAULT_CLIENT_ERROR_BODY_BYTES).then((body) => {
          fail(httpStatusError("WebSocket upgrade", res.statusCode ?? 0, body));
        });
      });
      socket.once("open", () => {
        settled = true;
        resolve();
      });
      socket.once("error", (error: Error) => {
        fail(new ClientTransportError(TransportErrorCode.Unreachable, `cannot open a WebSocket to ${wsUrl.origin}: ${error.message}`, { cause: error }));
      });
    });
    this.#watch(socket);
  }

  #watch(socket: WebSocket): void {
    let lastError: Error | undefined;
    let awaitingPong: NodeJS.Timeout | undefined;
    const pingMs = this.#options.pingIntervalMs ?? DEFAULT_CLIENT_PING_MS;
    const pongMs = this.#options.pingTimeoutMs ?? DEFAULT_CLIENT_PING_TIMEOUT_MS;
    // Liveness (spec: v1 durability, rule 7 leaves it to the implementer).
    const pinger = setInterval(() => {
      if (socket.readyState !== WebSocket.OPEN || awaitingPong !== undefined) return;
      awaitingPong = setTimeout(() => {
        lastError = new Error(`no pong within ${pongMs} ms`);
        socket.terminate();
      }, pongMs);
      awaitingPong.unref();
      socket.ping();
    }, pingMs);
    pinger.unref();
    socket.on("pong", () => {
      clearTimeout(awaitingPong);
      awaitingPong = undefined;
    });
    socket.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return; // spec: binary frames are ignored
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        this.onerror?.(new ClientTransportError(TransportErrorCode.Protocol, `ignored a frame that is not JSON (${text.length} characters)`));
        return;
      }
      const checked = validateMessage(value);
      if (!checked.ok) {
        this.onerror?.(new ClientTransportError(TransportErrorCode.Protocol, `ignored a frame that is not a JSON-RPC message: ${checked.reason}`));
        return;
      }
      this.onmessage?.(checked.message);
    });
    socket.on("error", (error: Error) => {
      lastError = error;
    });
    socket.once("close", (code: number, reason: Buffer) => {
      clearInterval(pinger);
      clearTimeout(awaitingPong);
      if (this.#ended) return;
      this.#ended = true;
      if (this.#ownsJar) this.#jar.clear();
      if (this.#closing) {
        this.onclose?.();
        return;
      }
      const why = lastError?.message ?? `close code ${code}${reason.length > 0 ? ` (${reason.toString("utf8")})` : ""}`;
      this.onclose?.(new ClientTransportError(TransportErrorCode.ConnectionLost, `the WebSocket closed: ${why}`, { cause: lastError }));
    });
  }

  send(message: JsonRpcMessage): Promise<void> {
    const socket = this.#socket;
    if (socket === undefined || this.#ended || this.#closing || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new ClientTransportError(TransportErrorCode.Closed, "the WebSocket is not open"));
    }
    return new Promise((resolve, reject) => {
      socket.send(JSON.stringify(message), { binary: false }, (error) => {
        if (error) reject(new ClientTransportError(TransportErrorCode.ConnectionLost, `WebSocket send failed: ${error.message}`, { cause: error }));
        else resolve();
      });
    });
  }

  async close(): Promise<void> {
    const socket = this.#socket;
    if (socket === undefined || this.#ended || this.#closing) return;
    this.#closing = true;
    await new Promise<void>((resolve) => {
      // A peer that never answers the close frame is cut.
      const cut = setTimeout(() => socket.terminate(), DEFAULT_CLIENT_CLOSE_TIMEOUT_MS);
      cut.unref();
      socket.once("close", () => {
        clearTimeout(cut);
        resolve();
      });
      socket.close(NORMAL_CLOSURE);
    });
  }
}
