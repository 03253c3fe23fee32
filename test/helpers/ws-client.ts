// A WebSocket client on `ws` for tests: opens /acp, records the 101's headers
// (or the refusal's status and body), and queues incoming text messages.
import type { IncomingHttpHeaders } from "node:http";
import WebSocket from "ws";

export interface WsRefusal {
  refused: true;
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export class WsTestClient {
  readonly ws: WebSocket;
  readonly headers: IncomingHttpHeaders;
  readonly #messages: unknown[] = [];
  readonly #waiters: ((m: unknown) => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(ws: WebSocket, headers: IncomingHttpHeaders) {
    this.ws = ws;
    this.headers = headers;
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const message: unknown = JSON.parse(String(data));
      const waiter = this.#waiters.shift();
      if (waiter !== undefined) waiter(message);
      else this.#messages.push(message);
    });
    this.closed = new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static open(
    url: string,
    options: { headers?: Record<string, string>; protocols?: string[]; ca?: string } = {},
  ): Promise<WsTestClient | WsRefusal> {
    const wsUrl = url.replace(/^http/, "ws");
    const ws = new WebSocket(wsUrl, options.protocols ?? [], {
      headers: options.headers ?? {},
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    return new Promise((resolve, reject) => {
      let upgradeHeaders: IncomingHttpHeaders = {};
      ws.once("upgrade", (res) => {
        upgradeHeaders = res.headers;
      });
      ws.once("open", () => resolve(new WsTestClient(ws, upgradeHeaders)));
      ws.once("unexpected-response", (_req, res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          resolve({ refused: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
          ws.terminate();
        });
      });
      ws.once("error", reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  next(timeoutMs = 10_000): Promise<Record<string, unknown>> {
    const queued = this.#messages.shift();
    if (queued !== undefined) return Promise.resolve(queued as Record<string, unknown>);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no WebSocket message within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push((m) => {
        clearTimeout(timer);
        resolve(m as Record<string, unknown>);
      });
    });
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closed;
  }
}

export function isRefusal(value: WsTestClient | WsRefusal): value is WsRefusal {
  return "refused" in value;
}
