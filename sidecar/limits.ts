// Every limit of the sidecar, with its unit. Options override them; these are
// the defaults a fresh `acp-remote serve` runs with.

/** Largest request body accepted on /acp and /v1, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Sessions one connection may create or load. */
export const DEFAULT_MAX_SESSIONS_PER_CONNECTION = 64;
/** Connections open at once (all profiles). */
export const DEFAULT_MAX_CONNECTIONS = 20_000;
/** Messages queued for one outbound stream (SSE or WebSocket) before it is cut off. */
export const DEFAULT_MAX_QUEUED_MESSAGES = 1_000;
/** Bytes queued for one outbound stream before it is cut off as a stalled reader. */
export const DEFAULT_MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Interval of SSE keep-alive comments and WebSocket pings, in milliseconds. */
export const DEFAULT_KEEPALIVE_MS = 15_000;
/** A connection with no stream and no request for this long is dropped, in milliseconds. */
export const DEFAULT_CONNECTION_IDLE_MS = 5 * 60_000;
/** A detached session is kept loadable for this long, in milliseconds. */
export const DEFAULT_DETACHED_SESSION_TTL_MS = 24 * 60 * 60_000;
/** How long a permission request waits for a detached session's client, in milliseconds. */
export const DEFAULT_PERMISSION_DETACHED_WAIT_MS = 5 * 60_000;
/** Journal entries kept per session for replay. */
export const DEFAULT_MAX_JOURNAL_ENTRIES = 10_000;
/** HTTP/1.1: time to receive the request headers, in milliseconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** HTTP/1.1: time to receive a whole request (not SSE streams), in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Bytes read to tell h2c prior knowledge, TLS and HTTP/1.1 apart, and how long to wait for them, in milliseconds. */
export const DEFAULT_SNIFF_TIMEOUT_MS = 10_000;
/** Agent restarts: first delay and cap of the exponential backoff, in milliseconds. */
export const DEFAULT_AGENT_RESTART_MIN_MS = 250;
export const DEFAULT_AGENT_RESTART_MAX_MS = 30_000;
/** Agent restarts: at most this many crashes are restarted within the window below; one more and the agent is failed. */
export const DEFAULT_AGENT_MAX_RESTARTS = 5;
/** Agent restarts: the sliding window the count above applies to, in milliseconds. */
export const DEFAULT_AGENT_RESTART_WINDOW_MS = 3 * 60_000;
/** Time an agent has to answer ACP `initialize` before its process is killed, in milliseconds. */
export const DEFAULT_AGENT_INITIALIZE_TIMEOUT_MS = 60_000;
/** Stopping an agent: time between SIGTERM and SIGKILL of its process group, in milliseconds. */
export const DEFAULT_AGENT_STOP_GRACE_MS = 3_000;
/** Terminals: time between SIGTERM and SIGKILL of a command's process group on kill or release, in milliseconds. */
export const DEFAULT_TERMINAL_KILL_GRACE_MS = 2_000;
/** Largest line an agent may write on stdout, in bytes. */
export const DEFAULT_MAX_AGENT_LINE_BYTES = 16 * 1024 * 1024;
/** Output kept per terminal when the agent sets no limit, in bytes. */
export const DEFAULT_TERMINAL_OUTPUT_BYTES = 1024 * 1024;
/** Terminals open at once per session. */
export const DEFAULT_MAX_TERMINALS_PER_SESSION = 16;
/** Largest file served by fs/read_text_file, in bytes. */
export const DEFAULT_MAX_READ_FILE_BYTES = 16 * 1024 * 1024;
