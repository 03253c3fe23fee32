// Limits of the stores, with their units: the shared store (./redis/), and
// the embedded store's checkpoints (./sqlite/checkpointer.ts).

/** How often the embedded store's worker copies its write-ahead log into the database file, in milliseconds. */
export const DEFAULT_STORE_CHECKPOINT_MS = 1_000;
/**
 * The embedded store's write-ahead log file is cut back to this size once a
 * checkpoint has emptied it (a burst leaves no huge file behind), in bytes.
 */
export const DEFAULT_STORE_WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * What a call answers while the store cannot be reached: retry after this
 * long (StoreUnavailableError.retryAfterSeconds, sent as Retry-After), in seconds.
 */
export const DEFAULT_STORE_RETRY_AFTER_S = 2;
/**
 * Longest wait for one command's reply, in milliseconds; a store that
 * stops answering (a hung server, a lost network) fails the call with
 * StoreUnavailableError instead of holding the request.
 */
export const DEFAULT_STORE_COMMAND_TIMEOUT_MS = 2_000;
/** Longest wait for one TCP (or TLS) connection to the store, in milliseconds. */
export const DEFAULT_STORE_CONNECT_TIMEOUT_MS = 2_000;
/**
 * How long `serve` keeps trying to reach the store when it starts, in
 * milliseconds, before it stops with a clear error (a store started at the
 * same time gets this long to come up).
 */
export const DEFAULT_STORE_START_TIMEOUT_MS = 5_000;
/** First wait before reconnecting to a lost store, in milliseconds; it doubles at each failed try. */
export const DEFAULT_STORE_RECONNECT_MIN_MS = 50;
/** Longest wait between two tries to reconnect to a lost store, in milliseconds. */
export const DEFAULT_STORE_RECONNECT_MAX_MS = 2_000;
/**
 * A session's journal is dropped from the store after this long without a
 * write, in milliseconds (refreshed by every write); its record stays.
 */
export const DEFAULT_STORE_JOURNAL_TTL_MS = 30 * 24 * 60 * 60_000;
/**
 * A deferred job is deleted by the nodes' sweep once older than its TTL; the
 * store also expires it by itself this long after the TTL, in milliseconds,
 * in case no node sweeps.
 */
export const DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS = 60 * 60_000;
/** Jobs deleted by one script of a sweep; a longer sweep runs several, so the store never blocks long, in jobs. */
export const DEFAULT_STORE_EXPIRE_BATCH = 500;
/**
 * A rate bucket idle this long is full again and is dropped from the store,
 * in milliseconds (a bucket refills completely in a minute).
 */
export const DEFAULT_STORE_RATE_IDLE_MS = 60_000;
