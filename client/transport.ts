// The client side of the ACP remote transport: one small interface that both
// profiles implement (Streamable HTTP in http-transport.ts, WebSocket in
// ws-transport.ts), in the shape of the MCP SDK's `Transport`.
import type { JsonRpcMessage } from "../protocol/jsonrpc.ts";
import type { CookieJar } from "./cookies.ts";

export interface ClientTransport {
  /** Opens the network connection (TCP, TLS, HTTP/2 or the WebSocket upgrade). */
  start(): Promise<void>;
  /**
   * Sends one message. The first message must be `initialize`. Resolves when the
   * server has accepted it (POST answered, frame written); the JSON-RPC answer
   * arrives later through `onmessage`. Rejects with a `ClientTransportError` when the
   * connection is unusable; the transport then closes itself.
   */
  send(message: JsonRpcMessage): Promise<void>;
  /** Ends the connection on purpose: DELETE (Streamable HTTP) or a close frame (WebSocket). */
  close(): Promise<void>;
  /** Every message the server sends, in the order it arrived on its stream. */
  onmessage?: (message: JsonRpcMessage) => void;
  /** A problem that does not end the connection by itself (a malformed event, a refused response). */
  onerror?: (error: Error) => void;
  /** Called once when the connection has ended, with the reason when it was not `close()`. */
  onclose?: (error?: ClientTransportError) => void;
  /** `Acp-Connection-Id` issued by the server, once known. */
  readonly connectionId: string | undefined;
  /** What the connection runs on: "h2", "http/1.1" or "websocket". */
  readonly protocol: string;
}

/** Why a transport failed; `status` is set when the server answered with an HTTP error. */
export const TransportErrorCode = {
  /** The server could not be reached (DNS, refused, TLS, timeout). */
  Unreachable: "ACP_ERR_UNREACHABLE",
  /** The server refused the credentials (401/403). */
  Unauthorized: "ACP_ERR_UNAUTHORIZED",
  /** The server answered with an HTTP error status. */
  HttpStatus: "ACP_ERR_HTTP_STATUS",
  /** The connection was lost after it was established (stream or socket closed). */
  ConnectionLost: "ACP_ERR_CONNECTION_LOST",
  /** The server broke the protocol (missing header, malformed body, oversized message). */
  Protocol: "ACP_ERR_PROTOCOL",
  /** The transport was used after it closed. */
  Closed: "ACP_ERR_CLOSED",
} as const;
export type TransportErrorCode = (typeof TransportErrorCode)[keyof typeof TransportErrorCode];

/**
 * The client's view of a failed connection (server unreachable, credentials
 * refused, connection lost). Not the server's HTTP error answers
 * (sidecar/acp/errors.ts): this one is what a client sees happen.
 */
export class ClientTransportError extends Error {
  readonly code: TransportErrorCode;
  readonly status: number | undefined;
  /** Body of the HTTP error answer, cut to a few KiB. */
  readonly body: string | undefined;

  constructor(code: TransportErrorCode, message: string, options: { status?: number; body?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ClientTransportError";
    this.code = code;
    this.status = options.status;
    this.body = options.body;
  }
}

/** Turns an HTTP error status into the matching error. */
export function httpStatusError(what: string, status: number, body: string): ClientTransportError {
  const detail = body.trim().length > 0 ? `: ${body.trim()}` : "";
  const code = status === 401 || status === 403 ? TransportErrorCode.Unauthorized : TransportErrorCode.HttpStatus;
  return new ClientTransportError(code, `${what} answered HTTP ${status}${detail}`, { status, body });
}

/** Options shared by both profiles. */
export interface TransportOptions {
  /** Sent as `Authorization: Bearer <token>` on every request and on the upgrade. */
  token?: string;
  /** Accept any TLS certificate (self-signed servers during development). */
  insecure?: boolean;
  /** Extra trusted certificate authorities, PEM. */
  ca?: string | Buffer;
  /** Extra headers sent on every request and on the upgrade. */
  headers?: Record<string, string>;
  /** Cookie jar; pass the same one to a new transport to keep affinity across reconnects. */
  cookies?: CookieJar;
  /** Largest message accepted from the server, in bytes. */
  maxMessageBytes?: number;
  connectTimeoutMs?: number;
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** HTTP/1.1 only: how long the connection stream may stay silent before the connection counts as lost. */
  streamIdleMs?: number;
}
