// The one place where /acp turns errors into HTTP answers (design: decision 5).
// An HTTP status and a JSON-RPC error code always travel as a pair, and every
// error body is a JSON-RPC response with `id: null`, as `application/json`.
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";
import { ErrorCode, errorResponse } from "../../protocol/jsonrpc.ts";
import type { HttpResponse } from "../http/types.ts";
import { UnknownAgentError } from "../hub/types.ts";
import { StoreUnavailableError } from "../store/shared-store.ts";
import { Header, MediaType } from "../../protocol/acp.ts";
import { tooDeepReason } from "../../common/json-depth.ts";
import type { BodyRefusals } from "../http/read-body.ts";

export class TransportError extends Error {
  readonly status: number;
  readonly code: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "TransportError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** Every error /acp answers with, named after the rule that raises it. */
export const Errors = {
  // Spec, Errors: 400 "without Acp-Connection-Id".
  missingConnectionId: () => new TransportError(400, ErrorCode.InvalidRequest, "Acp-Connection-Id header is required"),
  // Spec, Errors: 400 "session-scoped POST without Acp-Session-Id".
  missingSessionId: (what: string) =>
    new TransportError(400, ErrorCode.InvalidRequest, `Acp-Session-Id header is required for ${what}`),
  sessionIdMismatch: () =>
    new TransportError(400, ErrorCode.InvalidRequest, "Acp-Session-Id header and params.sessionId differ"),
  initializeOnConnection: () =>
    new TransportError(400, ErrorCode.InvalidRequest, "initialize opens a new connection: send it without Acp-Connection-Id"),
  parse: () => new TransportError(400, ErrorCode.ParseError, "body is not valid JSON"),
  invalidMessage: (reason: string) => new TransportError(400, ErrorCode.InvalidRequest, `not a JSON-RPC message: ${reason}`),
  // A value nested this deep would overflow the stack wherever it is next serialized (common/json-depth.ts).
  tooDeep: (maxDepth: number) => new TransportError(400, ErrorCode.InvalidRequest, tooDeepReason(maxDepth)),
  unsupportedProtocolVersion: (version: string) =>
    new TransportError(400, ErrorCode.InvalidRequest, `Acp-Protocol-Version ${JSON.stringify(version)} is not supported`),
  unauthorized: () =>
    new TransportError(401, ErrorCode.AuthRequired, "a valid bearer token is required", {
      [Header.WwwAuthenticate]: 'Bearer realm="acp-remote"',
    }),
  forbidden: (reason: string) => new TransportError(403, ErrorCode.InvalidRequest, reason),
  // Spec, Errors: 404 "Acp-Connection-Id unknown". A connection of another
  // principal is answered the same way, so that ids reveal nothing.
  unknownConnection: () => new TransportError(404, ErrorCode.ResourceNotFound, "unknown Acp-Connection-Id"),
  // Spec, Errors: 404 "Acp-Session-Id unknown for the connection".
  unknownSession: () => new TransportError(404, ErrorCode.ResourceNotFound, "unknown Acp-Session-Id for this connection"),
  unknownAgent: (agent: string) => new TransportError(404, ErrorCode.ResourceNotFound, `unknown agent ${JSON.stringify(agent)}`),
  notFound: (path: string) => new TransportError(404, ErrorCode.ResourceNotFound, `no resource at ${path}`),
  methodNotAllowed: (allow: string) =>
    new TransportError(405, ErrorCode.InvalidRequest, "method not allowed", { allow }),
  // RFC 6455, 4.2.1: a WebSocket handshake without what the server needs to take it up.
  badHandshake: (reason: string, headers: Record<string, string> = {}) =>
    new TransportError(400, ErrorCode.InvalidRequest, reason, headers),
  // The request's headers or body did not all arrive within requestTimeoutMs.
  requestTimeout: () => new TransportError(408, ErrorCode.InvalidRequest, "the request was not received in time"),
  // RFC 9110, 10.1.1: an `Expect` other than 100-continue.
  expectationFailed: () => new TransportError(417, ErrorCode.InvalidRequest, "the only expectation the server meets is 100-continue"),
  // Bytes the HTTP/1.1 parser refused before there was a request to route.
  malformedRequest: () => new TransportError(400, ErrorCode.InvalidRequest, "malformed HTTP request"),
  headersTooLarge: () => new TransportError(431, ErrorCode.InvalidRequest, "request headers are too large"),
  chunkExtensionsTooLarge: () => new TransportError(413, ErrorCode.InvalidRequest, "chunk extensions are too large"),
  // Spec, Errors: 406 "GET Accept lacks text/event-stream".
  notAcceptable: () => new TransportError(406, ErrorCode.InvalidRequest, "Accept must include text/event-stream"),
  // Design, decision 2: a second reader for a stream that is already open.
  streamAlreadyOpen: () => new TransportError(409, ErrorCode.InvalidRequest, "this stream is already open"),
  /** Last-Event-ID names no event this stream still keeps: resume with session/load instead. */
  cannotResume: (reason: string) => new TransportError(410, ErrorCode.ResourceNotFound, `cannot resume this stream: ${reason}; load the session instead`),
  // A session the server knows but that is not attached here: the client must
  // session/load it first. 409 fails only that session in the SDK client.
  sessionNotAttached: () =>
    new TransportError(409, ErrorCode.InvalidRequest, "session is not attached to this connection: session/load it first"),
  payloadTooLarge: (limit: number) =>
    new TransportError(413, ErrorCode.InvalidRequest, `body is larger than ${limit} bytes`),
  // Spec, Errors: 415 "POST Content-Type is not application/json".
  unsupportedMediaType: () => new TransportError(415, ErrorCode.InvalidRequest, "Content-Type must be application/json"),
  // Spec, Errors: 501 "Batch JSON-RPC request".
  batch: () => new TransportError(501, ErrorCode.InvalidRequest, "JSON-RPC batches are not supported"),
  tooManyConnections: () =>
    new TransportError(503, ErrorCode.InternalError, "too many connections", { [Header.RetryAfter]: "5" }),
  shuttingDown: () => new TransportError(503, ErrorCode.InternalError, "server is shutting down"),
  storeUnavailable: (message: string, retryAfterSeconds: number) =>
    new TransportError(503, ErrorCode.InternalError, message, { [Header.RetryAfter]: String(Math.max(1, Math.ceil(retryAfterSeconds))) }),
  internal: () => new TransportError(500, ErrorCode.InternalError, "internal error"),
  // The agent behind the connection could not answer initialize (it failed to
  // start, or refused): the gateway's upstream failed, no connection is made.
  agentUnavailable: (message: string) => new TransportError(502, ErrorCode.InternalError, message),
} as const;

/** Any thrown value as the TransportError it is answered with. */
/** /acp's refusals of a request body: 413 past the limit, 408 cut at its deadline, as JSON-RPC errors. */
export const BODY_REFUSALS: BodyRefusals = { tooLarge: Errors.payloadTooLarge, timedOut: Errors.requestTimeout };

function toTransportError(error: unknown): TransportError {
  if (error instanceof TransportError) return error;
  if (error instanceof UnknownAgentError) return Errors.unknownAgent(error.agent);
  if (error instanceof StoreUnavailableError) return Errors.storeUnavailable(error.message, error.retryAfterSeconds);
  return Errors.internal();
}

/** The JSON text of an error answer: a JSON-RPC response with `id: null`. */
function errorBody(error: TransportError): string {
  return JSON.stringify(errorResponse(null, error.code, error.message));
}

/** Answers a request with the error, unless an answer was already started. */
export function sendError(res: HttpResponse, error: unknown): void {
  const e = toTransportError(error);
  if (res.headersSent || res.writableEnded || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = errorBody(e);
  res.writeHead(e.status, {
    ...e.headers,
    [Header.ContentType]: MediaType.Json,
    "content-length": String(Buffer.byteLength(body)),
    "cache-control": "no-store",
  });
  res.end(body);
}

/**
 * Answers the error on a bare HTTP/1.1 socket (a refused upgrade, or bytes the
 * parser refused before there was a request), then closes the socket once the
 * answer is written: a client that never closes its side cannot keep it.
 */
export function rejectUpgrade(socket: Duplex, error: unknown): void {
  const e = toTransportError(error);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = errorBody(e);
  const headers: Record<string, string> = {
    ...e.headers,
    [Header.ContentType]: MediaType.Json,
    "content-length": String(Buffer.byteLength(body)),
    connection: "close",
  };
  const head = [
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ""}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join("\r\n");
  socket.once("finish", () => socket.destroy());
  socket.end(`${head}\r\n\r\n${body}`);
}
