// Every limit of the sidecar, with its unit. Options override them; these are
// the defaults a fresh `acp-remote serve` runs with.

/** Largest request body accepted on /acp and /v1, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * Levels of arrays and objects one inbound message may nest (the message itself counts one), at every door:
 * /acp bodies and WebSocket messages, /v1 bodies, the control protocol and agents' lines. A deeper message is
 * refused with its protocol's error (-32600, or 400 `invalid_request_error` on /v1); an agent's is logged and
 * dropped, or fails the request it answers. Serializing a value some 4,000 levels deep overflows the stack; in levels.
 */
export { DEFAULT_MAX_JSON_DEPTH } from "../common/json-depth.ts";
/**
 * Sessions one principal (a person) may hold at once, attached or detached (a
 * detached session stays loadable for DEFAULT_DETACHED_SESSION_TTL_MS, so
 * reconnecting must not reset the count); ended sessions and /v1's one-shot
 * turns do not count.
 */
export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 128;
/**
 * A `session/new` that carries a request key (`_meta.acpRemote.requestKey`) is remembered this long after it
 * created its session: the same person asking again with that key, because the answer was lost with the link,
 * gets the same session instead of a second one; in milliseconds.
 */
export const DEFAULT_SESSION_NEW_KEY_TTL_MS = 10 * 60_000;
/**
 * Request keys of `session/new` remembered per person at once; past it the oldest is forgotten first (a retry
 * with it makes a new session). As many as the sessions a person may hold, in keys.
 */
export const DEFAULT_SESSION_NEW_KEYS_PER_PERSON = DEFAULT_MAX_SESSIONS_PER_PRINCIPAL;
/** Longest request key a `session/new` may carry; a longer one, or one that is no string, answers -32602; in characters. */
export const DEFAULT_SESSION_NEW_KEY_MAX_CHARS = 128;
/** /acp transport connections open at once (all profiles); sockets are bounded by DEFAULT_MAX_SOCKETS. */
export const DEFAULT_MAX_CONNECTIONS = 20_000;
/**
 * Messages queued for one outbound stream (SSE or WebSocket) before its reader
 * is cut off as stalled. Above the journal's bounds, so that the replay of a
 * whole history on session/load always fits.
 */
export const DEFAULT_MAX_QUEUED_MESSAGES = 10_000;
/**
 * WebSocket messages received but not yet handled (they wait, in order, while
 * `initialize` waits on the agent); one more closes the socket with 1008, so a
 * flooding client cannot grow the server's memory; in messages.
 */
export const DEFAULT_WS_MAX_INBOUND_MESSAGES = 256;
/** The same bound in bytes of message text (at least one message of DEFAULT_MAX_BODY_BYTES), in bytes. */
export const DEFAULT_WS_MAX_INBOUND_BYTES = 8 * 1024 * 1024;
/** Bytes queued for one outbound stream before its reader is cut off as stalled. */
export const DEFAULT_MAX_QUEUED_BYTES = 32 * 1024 * 1024;
/**
 * Bytes queued for one outbound stream past which the agent whose messages
 * filled it waits before its next read, until the reader took them (two SSE
 * batches: the socket always has the next one ready); in bytes.
 */
export const DEFAULT_OUTBOUND_HIGH_WATER_BYTES = 2 * 64 * 1024;
/**
 * Longest one read of an agent waits for the outbound streams its last read
 * left past DEFAULT_OUTBOUND_HIGH_WATER_BYTES. A stream that did not drain by
 * then is not waited for again until it has; in milliseconds.
 */
export const DEFAULT_AGENT_READ_WAIT_MS = 50;

/**
 * After an agent process exits, how long the sidecar waits for its stdout to close (every line it wrote read)
 * before it fails what waited on it, in milliseconds: `exit` can come before the last lines are read, and they
 * are the turn's last updates. Bounded: a child the agent left behind may hold the pipe open.
 */
export const DEFAULT_AGENT_EXIT_DRAIN_MS = 1_000;
/**
 * Events an SSE stream keeps after writing them, for a reader that comes back
 * with `Last-Event-ID`: what a cut stream wrote into a dead socket before the
 * server saw it close is sent again from here. An id older than what is kept
 * answers 410 and the client loads the session instead; in events.
 */
export const DEFAULT_SSE_REPLAY_EVENTS = 2_000;
/**
 * The same bound in characters of JSON text (about a byte each for ASCII): a
 * socket's send buffer holds a few MiB at most, so that much can be in flight
 * when a stream dies; in characters.
 */
export const DEFAULT_SSE_REPLAY_CHARS = 4 * 1024 * 1024;
/**
 * What all SSE streams of a server keep for resuming readers, together: past
 * it, the oldest kept events of the largest logs are forgotten first (a resume
 * from one of them answers 410, and the client loads its session). Each
 * stream's own bounds above hold as well; in characters.
 */
export const DEFAULT_SSE_REPLAY_BUDGET_CHARS = 256 * 1024 * 1024;
/**
 * Most characters of events an SSE stream gathers into one write. A reader
 * that falls behind has its backlog taken a batch at a time, as the socket
 * drains, rather than joined into one string of megabytes; in characters.
 */
export const DEFAULT_SSE_WRITE_CHARS = 64 * 1024;
/** Interval of SSE keep-alive comments and WebSocket pings, in milliseconds. */
export const DEFAULT_KEEPALIVE_MS = 15_000;
/** A connection with no stream and no request for this long is dropped, in milliseconds. */
export const DEFAULT_CONNECTION_IDLE_MS = 5 * 60_000;
/** A detached session is kept loadable for this long, in milliseconds. */
export const DEFAULT_DETACHED_SESSION_TTL_MS = 24 * 60 * 60_000;
/** How long a permission request waits for a detached session's client, in milliseconds. */
export const DEFAULT_PERMISSION_DETACHED_WAIT_MS = 5 * 60_000;
/**
 * Longest title a session gets from its first prompt (when its agent gives it none): the prompt's first line,
 * cut at a word and ended with "…" past this; two lines of a phone's session list, in characters.
 */
export const DEFAULT_SESSION_TITLE_CHARS = 60;
/** How much of the agent's answer a turn's notice keeps to find its first line, in characters. */
export const DEFAULT_NOTICE_ANSWER_CHARS = 2_000;
/** Journal entries kept per session for replay (the oldest go first); below DEFAULT_MAX_QUEUED_MESSAGES. */
export const DEFAULT_MAX_JOURNAL_ENTRIES = 5_000;
/** Journal bytes kept per session for replay (the oldest go first); below DEFAULT_MAX_QUEUED_BYTES. */
export const DEFAULT_MAX_JOURNAL_BYTES = 16 * 1024 * 1024;
/**
 * A run of text chunks merges into one journal entry up to this many characters, then a new entry starts.
 * The growing entry is rewritten on every flush, so this bounds each rewrite (unbounded, a flood of n chunks
 * costs O(n²) bytes of JSON and SQLite writes), in UTF-16 code units.
 */
export const DEFAULT_JOURNAL_MERGE_CHARS = 16 * 1024;
/**
 * When a turn is compacted (in the store once it ends, and in every replay), a run of text chunks of one
 * message merges into one update up to this many characters: a message is one update, and still far from a
 * client's bound on one message (16 MiB for `connect`), in UTF-16 code units.
 */
export const DEFAULT_REPLAY_MERGE_CHARS = 1024 * 1024;
/**
 * A turn still running is compacted in the store (its tool calls folded, its plans but the last dropped) each
 * time it has added this many entries, so that a long turn is not trimmed to DEFAULT_MAX_JOURNAL_ENTRIES before
 * it ends; each compaction reads and rewrites the turn so far, in entries.
 */
export const DEFAULT_JOURNAL_COMPACT_ENTRIES = 1_000;
/**
 * Journal writes wait this long to be batched into one transaction (a flood of updates then costs a few
 * commits a second instead of one per event-loop turn); replays and shutdown flush at once, in milliseconds.
 */
export const DEFAULT_JOURNAL_FLUSH_MS = 50;
/**
 * A session that comes to this node (its start, or a take-over) has the newest this many entries of its journal
 * read to see whether the server stopped in the middle of a turn; only when they hold no turn's end is the
 * whole journal read, in entries.
 */
export const DEFAULT_OPEN_TURN_SCAN_ENTRIES = 256;
/** How long a journal write the store refused (unreachable) waits before it is tried again, in milliseconds. */
export const DEFAULT_JOURNAL_RETRY_MS = 1_000;
/**
 * Sessions whose journal a node holds in memory (each one's last entry, kept to merge the next chunk into,
 * and what waits to be written); past it the oldest with nothing to write leave memory, in sessions.
 */
export const DEFAULT_MAX_JOURNALS_IN_MEMORY = 1_000;
/** HTTP/1.1: time to receive the request headers, in milliseconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/**
 * Time to receive a whole request, headers and body, on HTTP/1.1 and HTTP/2;
 * past it the request is answered 408 and cut. It bounds receiving the
 * request, not the answer: a GET's SSE stream can run for hours; in milliseconds.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Bytes read to tell h2c prior knowledge, TLS and HTTP/1.1 apart, and how long to wait for them, in milliseconds. */
export const DEFAULT_SNIFF_TIMEOUT_MS = 10_000;
/** Largest line an agent may write on stdout, in bytes. */
export const DEFAULT_MAX_AGENT_LINE_BYTES = 16 * 1024 * 1024;
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
/** Stopping an agent: after SIGKILL, how long to wait for its exit before stop() gives up waiting, in milliseconds. */
export const DEFAULT_AGENT_STOP_KILL_WAIT_MS = 2_000;

// /v1 chat completions and the deferred mode (docs/deferred.md).
/** A deferred result (or failure) is kept this long after the request was created, in milliseconds (spec: Limits 2). */
export const DEFAULT_V1_RESULT_TTL_MS = 24 * 60 * 60_000;
/** Interval of the sweep that deletes expired deferred results, in milliseconds. */
export const DEFAULT_V1_SWEEP_INTERVAL_MS = 60_000;
/** Completions (deferred, plain or streamed) running at once on one backend (an agent, or the upstream). */
export const DEFAULT_V1_CONCURRENCY_PER_BACKEND = 2;
/** Chat completion requests one key may make per minute, deferred and plain alike (spec: Limits 3). */
export const DEFAULT_V1_RATE_LIMIT_PER_MINUTE = 60;
/** Deferred jobs one key may have waiting or running at once. */
export const DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY = 256;
/** Times a deferred job is started; a job cut off by a sidecar restart this often is reported failed. */
export const DEFAULT_V1_MAX_JOB_ATTEMPTS = 2;
/** One completion may run this long before it is aborted and reported failed (504), in milliseconds. */
export const DEFAULT_V1_JOB_TIMEOUT_MS = 60 * 60_000;
/**
 * `stream: true`: chunks queued for a client whose socket is full; one more and the client is cut off as stalled
 * (its completion is aborted and its backend slot freed), in chunks.
 */
export const DEFAULT_V1_STREAM_MAX_QUEUED_CHUNKS = 10_000;
/** `stream: true`: the same bound in bytes of serialized chunks, in bytes. */
export const DEFAULT_V1_STREAM_MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** `stream: true`: after the last chunk, time a client has to take what is still queued before it is cut off, in milliseconds. */
export const DEFAULT_V1_STREAM_DRAIN_TIMEOUT_MS = 60_000;
/**
 * Largest event (or line) of the upstream provider's event stream; a longer one fails the completion with 502,
 * so a provider that never ends an event cannot grow the sidecar's memory; in UTF-16 code units.
 */
export const DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS = 4 * 1024 * 1024;
/** How long the upstream provider's model list is cached, in milliseconds. */
export const DEFAULT_V1_UPSTREAM_MODELS_TTL_MS = 60_000;
/** A stream whose sink holds more than this many unsent bytes waits for it to drain (WebSocket backpressure), in bytes. */
export const DEFAULT_WRITE_HIGH_WATER_BYTES = 64 * 1024;
/** On shutdown, sockets still open this long after streams were ended are destroyed, in milliseconds. */
export const DEFAULT_CLOSE_GRACE_MS = 2_000;
/**
 * An HTTP/2 connection (or an HTTP/1.1 socket on the TLS port) with no traffic
 * for this long is closed. Open SSE streams send a keep-alive every
 * DEFAULT_KEEPALIVE_MS, so only idle or dead sockets reach it; in milliseconds.
 */
export const DEFAULT_HTTP2_IDLE_MS = 60_000;

// The listening socket and the WebSocket handshake (sidecar/server/http/listener.ts, sidecar/acp/ws-profile.ts).
/**
 * Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). Room for a person's
 * DEFAULT_MAX_SESSIONS_PER_PRINCIPAL session streams, the connection stream and the requests beside them on one
 * connection; clients queue what is over it, in streams.
 */
export const DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS = 256;
/**
 * Sockets the listening port holds at once, every protocol together; one more is closed as soon as it is accepted.
 * Above DEFAULT_MAX_CONNECTIONS, so that every transport connection can be a WebSocket with room left for plain
 * requests, in sockets.
 */
export const DEFAULT_MAX_SOCKETS = 25_000;
/** Time a WebSocket has, after its 101, to send `initialize`; then it is closed with 1008, in milliseconds. */
export const DEFAULT_WS_INITIALIZE_TIMEOUT_MS = 30_000;

// Control protocol (editor <-> sidecar, docs/control-protocol.md).
/** Status changes within this interval are pushed to the editor as one snapshot, in milliseconds. */
export const DEFAULT_CONTROL_STATUS_DEBOUNCE_MS = 100;

// The ACP Registry (`--agent NAME`, `acp-remote agents`; docs/agents.md).
/** Time a refresh of the agent list from the registry's URL may take, connection and body, before the cache or the shipped snapshot is used, in milliseconds. */
export const DEFAULT_REGISTRY_FETCH_TIMEOUT_MS = 3_000;
/** Largest agent list accepted from the registry, in bytes. */
export const DEFAULT_REGISTRY_MAX_BYTES = 4 * 1024 * 1024;
/** A cached agent list younger than this is used without asking the registry again, in milliseconds. */
export const DEFAULT_REGISTRY_REFRESH_AFTER_MS = 60 * 60_000;
/**
 * An outbound stream (SSE or WebSocket) past DEFAULT_MAX_QUEUED_MESSAGES cuts its reader off only once the reader
 * has taken nothing for this long: a reader that keeps reading while a fast agent gets ahead of it is not stalled
 * (DEFAULT_MAX_QUEUED_BYTES still cuts at once), in milliseconds.
 */
export const DEFAULT_OUTBOUND_STALL_MS = 5_000;
/**
 * Ids of deferred jobs whose row the embedded store deleted (retrieved, cancelled, expired) that it remembers, so
 * that a later poll of one is answered 404 without a statement; the oldest are forgotten first, in ids.
 */
export const DEFAULT_V1_GONE_IDS_KEPT = 20_000;

// Public addresses (`--public-url`, the editor's asExternalUri; docs/remote-access.md).
/** Public URLs one server accepts at once, from the command line and from its editor together, in URLs. */
export const DEFAULT_MAX_PUBLIC_URLS = 16;
/** Longest public URL accepted, in characters. */
export const DEFAULT_PUBLIC_URL_MAX_CHARS = 2_048;
