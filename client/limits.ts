// Every limit of the remote transport client and `acp-remote connect`, with its unit.

/** Largest JSON-RPC message the client reads (SSE event, WebSocket frame, editor line), in bytes. */
export const DEFAULT_CLIENT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Bytes of an HTTP error body the client keeps for its error message. */
export const DEFAULT_CLIENT_ERROR_BODY_BYTES = 8 * 1024;
/** Time to open the TCP/TLS connection and finish the HTTP/2 or WebSocket handshake, in milliseconds. */
export const DEFAULT_CLIENT_CONNECT_TIMEOUT_MS = 15_000;
/** Interval of the client's HTTP/2 and WebSocket pings (liveness of an idle connection), in milliseconds. */
export const DEFAULT_CLIENT_PING_MS = 20_000;
/** A ping unanswered for this long marks the connection dead, in milliseconds. */
export const DEFAULT_CLIENT_PING_TIMEOUT_MS = 20_000;
/** Reconnect: first delay and cap of the exponential backoff, in milliseconds. */
export const DEFAULT_RECONNECT_MIN_MS = 250;
export const DEFAULT_RECONNECT_MAX_MS = 10_000;
/** Reconnect gives up when the server has been unreachable for this long, in milliseconds. */
export const DEFAULT_RECONNECT_GIVE_UP_MS = 5 * 60_000;
/** Editor messages held while reconnecting; beyond this they are failed, in messages. */
export const DEFAULT_CONNECT_MAX_HELD_MESSAGES = 1_000;
/** Session updates remembered per session to recognise them in a reconnect's replay, in updates. */
export const DEFAULT_CONNECT_MAX_REMEMBERED_UPDATES = 10_000;
/** After the editor closes stdin, how long connect waits for the answers to its last requests, in milliseconds. */
export const DEFAULT_CONNECT_DRAIN_MS = 5_000;
/** Time the client waits for the answer to `initialize`, in milliseconds; longer than the server's own agent initialize timeout, so that the server's error arrives first. */
export const DEFAULT_CLIENT_INITIALIZE_TIMEOUT_MS = 90_000;
/** Text of chunk updates remembered per session and kind to recognise it in a reconnect's replay, in characters. */
export const DEFAULT_CONNECT_MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;
/** HTTP/1.1 (no pings there): a connection stream silent this long, keep-alives included, is taken as lost, in milliseconds. */
export const DEFAULT_CLIENT_STREAM_IDLE_MS = 60_000;
/** Server requests withdrawn with `$/cancel_request` whose session the Streamable HTTP client keeps for a late answer, in requests. */
export const DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT = 64;
/** WebSocket close: a peer that has not answered the close frame within this is cut, in milliseconds. */
export const DEFAULT_CLIENT_CLOSE_TIMEOUT_MS = 2_000;
/**
 * Reconnecting: a `session/load` the server refuses because it is still closing the session of the lost
 * connection (qwen serve: "retry after close completes") is tried again this many times.
 */
export const DEFAULT_CONNECT_RELOAD_RETRIES = 10;
/** The wait between those tries, in milliseconds. */
export const DEFAULT_CONNECT_RELOAD_RETRY_MS = 300;
/**
 * A stream the server offers to resume (Last-Event-ID) is reopened at once when it ends; after this many
 * reopens in a row that brought no event, the connection is taken as lost (reconnect and session/load).
 */
export const DEFAULT_CLIENT_STREAM_RESUMES = 3;
