// The limits one server runs with: the `DEFAULT_*` constants, overridable per
// server (tests shrink them to reach a bound quickly).
import {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_CONNECTION_IDLE_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HTTP2_IDLE_MS,
  DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_QUEUED_BYTES,
  DEFAULT_MAX_QUEUED_MESSAGES,
  DEFAULT_MAX_SOCKETS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SNIFF_TIMEOUT_MS,
  DEFAULT_SSE_REPLAY_BUDGET_CHARS,
  DEFAULT_SSE_REPLAY_CHARS,
  DEFAULT_SSE_REPLAY_EVENTS,
  DEFAULT_WRITE_HIGH_WATER_BYTES,
  DEFAULT_WS_INITIALIZE_TIMEOUT_MS,
  DEFAULT_WS_MAX_INBOUND_BYTES,
  DEFAULT_WS_MAX_INBOUND_MESSAGES,
} from "../limits.ts";

export interface ServerLimits {
  /** Bytes of one request body (POST /acp) or WebSocket message. */
  maxBodyBytes: number;
  /** Transport connections open at once, both profiles. */
  maxConnections: number;
  /** Messages queued for one outbound stream before its reader is cut off. */
  maxQueuedMessages: number;
  /** Bytes queued for one outbound stream before its reader is cut off. */
  maxQueuedBytes: number;
  /** WebSocket messages received and not yet handled before initialize is answered; one more closes with 1008. */
  wsMaxInboundMessages: number;
  /** The same bound in bytes of message text. */
  wsMaxInboundBytes: number;
  /** Unsent bytes a WebSocket may hold before its stream waits, in bytes. */
  writeHighWaterBytes: number;
  /** Events an SSE stream keeps after writing them, for a reader that resumes with Last-Event-ID. */
  sseReplayEvents: number;
  /** The same bound in characters of JSON text. */
  sseReplayChars: number;
  /** What all SSE streams keep together for resuming readers, in characters of JSON text. */
  sseReplayBudgetChars: number;
  /** SSE keep-alive comments and WebSocket pings, in milliseconds. */
  keepAliveMs: number;
  /** A Streamable HTTP connection with no open stream and no request for this long detaches, in milliseconds. */
  connectionIdleMs: number;
  /** HTTP/1.1 time to receive the request headers, in milliseconds. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body (HTTP/1.1 and HTTP/2); past it 408, in milliseconds. */
  requestTimeoutMs: number;
  /** Time for a cleartext client to send the bytes that tell h2c from HTTP/1.1, in milliseconds. */
  sniffTimeoutMs: number;
  /** Time sockets get to finish after shutdown ended their streams, in milliseconds. */
  closeGraceMs: number;
  /** An HTTP/2 connection without traffic for this long is closed, in milliseconds. */
  http2IdleMs: number;
  /** Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  http2MaxConcurrentStreams: number;
  /** Sockets the listening port holds at once; one more is closed when accepted. */
  maxSockets: number;
  /** Time a WebSocket has after its 101 to send initialize; then it closes with 1008, in milliseconds. */
  wsInitializeTimeoutMs: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  maxQueuedMessages: DEFAULT_MAX_QUEUED_MESSAGES,
  maxQueuedBytes: DEFAULT_MAX_QUEUED_BYTES,
  writeHighWaterBytes: DEFAULT_WRITE_HIGH_WATER_BYTES,
  wsMaxInboundMessages: DEFAULT_WS_MAX_INBOUND_MESSAGES,
  wsMaxInboundBytes: DEFAULT_WS_MAX_INBOUND_BYTES,
  sseReplayEvents: DEFAULT_SSE_REPLAY_EVENTS,
  sseReplayChars: DEFAULT_SSE_REPLAY_CHARS,
  sseReplayBudgetChars: DEFAULT_SSE_REPLAY_BUDGET_CHARS,
  keepAliveMs: DEFAULT_KEEPALIVE_MS,
  connectionIdleMs: DEFAULT_CONNECTION_IDLE_MS,
  headersTimeoutMs: DEFAULT_HEADERS_TIMEOUT_MS,
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  sniffTimeoutMs: DEFAULT_SNIFF_TIMEOUT_MS,
  closeGraceMs: DEFAULT_CLOSE_GRACE_MS,
  http2IdleMs: DEFAULT_HTTP2_IDLE_MS,
  http2MaxConcurrentStreams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
  maxSockets: DEFAULT_MAX_SOCKETS,
  wsInitializeTimeoutMs: DEFAULT_WS_INITIALIZE_TIMEOUT_MS,
});

/** Defaults completed with the given overrides; every value must be a positive number. */
export function resolveLimits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS };
  for (const [key, value] of Object.entries(overrides) as [keyof ServerLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`limit ${key} must be a positive number, got ${value}`);
    limits[key] = value;
  }
  return limits;
}

/**
 * On SIGTERM, how long a draining server waits for running prompt turns before
 * it closes anyway; shorter than the 30 s a container orchestrator usually
 * grants before SIGKILL, in milliseconds.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 25_000;
/** How long /readyz waits for the readiness checks before it answers 503, in milliseconds. */
export const DEFAULT_READINESS_CHECK_TIMEOUT_MS = 2_000;
/** `Retry-After` of a 503 from /readyz, in seconds. */
export const DEFAULT_NOT_READY_RETRY_AFTER_S = 5;
