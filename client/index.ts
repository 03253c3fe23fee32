// Client library of the ACP remote transport: `createTransport` picks the
// profile. Clients MUST support both profiles and a server MAY offer only
// WebSocket (spec: "What the service does", rule 4), so `auto` starts with
// Streamable HTTP and falls back to WebSocket when the server has none.
import { Acp } from "../protocol/acp.ts";
import { isRequest, type JsonRpcMessage } from "../protocol/jsonrpc.ts";
import { HttpTransport, NO_STREAMABLE_HTTP_STATUSES } from "./http-transport.ts";
import { ClientTransportError, TransportErrorCode, type ClientTransport, type TransportOptions } from "./transport.ts";
import { WebSocketTransport } from "./ws-transport.ts";

export { CookieJar } from "./cookies.ts";
export { HttpTransport } from "./http-transport.ts";
export { endpointUrl } from "./http-answer.ts";
export { WebSocketTransport } from "./ws-transport.ts";
export { ClientTransportError, TransportErrorCode, type ClientTransport, type TransportOptions } from "./transport.ts";

export const TransportKind = { Http: "http", WebSocket: "ws", Auto: "auto" } as const;
export type TransportKind = (typeof TransportKind)[keyof typeof TransportKind];

export interface CreateTransportOptions extends TransportOptions {
  /** Profile: "http" (Streamable HTTP), "ws" (WebSocket) or "auto" (HTTP, else WebSocket). Default "auto". */
  transport?: TransportKind;
}

export function createTransport(url: string | URL, options: CreateTransportOptions = {}): ClientTransport {
  const { transport = TransportKind.Auto, ...rest } = options;
  switch (transport) {
    case TransportKind.Http:
      return new HttpTransport(url, rest);
    case TransportKind.WebSocket:
      return new WebSocketTransport(url, rest);
    case TransportKind.Auto:
      return new AutoTransport(url, rest);
  }
}

/** Whether an initialize failure says "no Streamable HTTP here" rather than "no server" or "bad token". */
function wantsWebSocket(error: unknown): boolean {
  if (!(error instanceof ClientTransportError)) return false;
  if (error.code === TransportErrorCode.HttpStatus) return error.status !== undefined && NO_STREAMABLE_HTTP_STATUSES.has(error.status);
  // Something answered, but not with the initialize response (an HTTP/1.1
  // server that is not ours, a proxy that knows only upgrades).
  return error.code === TransportErrorCode.Protocol;
}

/** Chooses the profile on the first message (initialize), then hands everything to it. */
class AutoTransport implements ClientTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: (error?: ClientTransportError) => void;

  readonly #url: string | URL;
  readonly #options: TransportOptions;
  #chosen: ClientTransport | undefined;

  constructor(url: string | URL, options: TransportOptions) {
    this.#url = url;
    this.#options = options;
  }

  get connectionId(): string | undefined {
    return this.#chosen?.connectionId;
  }

  get protocol(): string {
    return this.#chosen?.protocol ?? "auto";
  }

  async start(): Promise<void> {
    // The network is opened with the first message, once the profile is known.
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (this.#chosen !== undefined) return this.#chosen.send(message);
    if (!isRequest(message) || message.method !== Acp.agent.initialize) {
      throw new ClientTransportError(TransportErrorCode.Protocol, "the first message must be the initialize request");
    }
    const http = new HttpTransport(this.#url, this.#options);
    try {
      this.#wire(http);
      await http.start();
      await http.send(message);
      this.#chosen = http;
      return;
    } catch (error) {
      http.onclose = undefined;
      http.onmessage = undefined;
      await http.close().catch(() => {});
      if (!wantsWebSocket(error)) throw error;
    }
    const ws = new WebSocketTransport(this.#url, this.#options);
    this.#wire(ws);
    await ws.start();
    this.#chosen = ws;
    await ws.send(message);
  }

  #wire(t: ClientTransport): void {
    t.onmessage = (m) => this.onmessage?.(m);
    t.onerror = (e) => this.onerror?.(e);
    t.onclose = (e) => {
      if (this.#chosen === t) this.onclose?.(e);
    };
  }

  async close(): Promise<void> {
    if (this.#chosen !== undefined) {
      await this.#chosen.close();
    } else {
      this.onclose?.();
    }
  }
}
