// Every limit of the web client, with its unit.

/** First wait before reconnecting after the link dropped (milliseconds). */
export const DEFAULT_RECONNECT_INITIAL_MS = 500;

/** Longest wait between two reconnection attempts while the page is hidden (milliseconds). */
export const DEFAULT_RECONNECT_MAX_MS = 15_000;

/**
 * Longest wait between two reconnection attempts while the page is visible
 * (milliseconds): someone looks at it, so a server back after a restart is
 * seen within this.
 */
export const DEFAULT_RECONNECT_VISIBLE_MAX_MS = 2_000;

/** Each failed attempt multiplies the wait by this (factor). */
export const DEFAULT_RECONNECT_FACTOR = 2;

/** How long opening a WebSocket may take before the client falls back to Streamable HTTP (milliseconds). */
export const DEFAULT_WS_OPEN_TIMEOUT_MS = 5_000;

/**
 * While a resumed session shows a turn this page did not start, how often
 * `session/list` is asked whether it still runs (milliseconds), from a server
 * that does not tell the session's state as `state_update` (one that does is
 * never polled).
 */
export const DEFAULT_RUNNING_POLL_MS = 2_000;

/**
 * Largest event the page reads from a Streamable HTTP stream (a partial line
 * plus the data of an unfinished event), in UTF-16 code units; the same bound
 * as `connect`'s 16 MiB per message.
 */
export const DEFAULT_SSE_MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * A Streamable HTTP stream the server offers to resume (Last-Event-ID) is
 * reopened at once when it ends or fails; after this many reopens in a row
 * that brought no message, the link is taken as dropped (reconnect and
 * session/load), as `connect` does (`DEFAULT_CLIENT_STREAM_RESUMES`).
 */
export const DEFAULT_STREAM_RESUMES = 3;

/**
 * How long the browser's push service may take to make a subscription
 * (milliseconds): without one in reach (no network, or a browser without a
 * push service), `pushManager.subscribe` never settles, and the page says so
 * instead of waiting for ever.
 */
export const DEFAULT_PUSH_SUBSCRIBE_TIMEOUT_MS = 10_000;

/**
 * Turns of a session's history the page asks for at once, from a server that
 * gives it in pages: when it opens a session (the latest), and each time the
 * person scrolls up to the earlier ones. One turn of an hour's work is about
 * 150 KiB: on a 1.6 Mbit/s link its last words show in under 2 s (turns).
 */
export const DEFAULT_HISTORY_PAGE_TURNS = 1;
