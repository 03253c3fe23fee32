// Configuration of /v1: its limits (defaults from ../limits.ts). The
// environment is read by the composition (server/environment.ts), not here.
import {
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_V1_CONCURRENCY_PER_BACKEND,
  DEFAULT_V1_JOB_TIMEOUT_MS,
  DEFAULT_V1_MAX_JOB_ATTEMPTS,
  DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  DEFAULT_V1_RATE_LIMIT_PER_MINUTE,
  DEFAULT_V1_RESULT_TTL_MS,
  DEFAULT_V1_STREAM_DRAIN_TIMEOUT_MS,
  DEFAULT_V1_STREAM_MAX_QUEUED_BYTES,
  DEFAULT_V1_STREAM_MAX_QUEUED_CHUNKS,
  DEFAULT_V1_SWEEP_INTERVAL_MS,
  DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS,
} from "../limits.ts";

export interface V1Limits {
  /** Bytes; 413 beyond. */
  maxBodyBytes: number;
  /** Chat completion requests per key per minute; 429 beyond. */
  ratePerMinute: number;
  /** Completions running at once on one backend. */
  concurrencyPerBackend: number;
  /** Milliseconds a deferred result is kept after creation. */
  resultTtlMs: number;
  /** Milliseconds between sweeps of expired results. */
  sweepIntervalMs: number;
  /** Starts of one deferred job across restarts. */
  maxJobAttempts: number;
  /** Deferred jobs waiting or running per key; 429 beyond. */
  maxPendingJobsPerKey: number;
  /** Milliseconds one completion may run. */
  jobTimeoutMs: number;
  /** `stream: true`: chunks and bytes queued for a client that does not read before it is cut off. */
  streamMaxQueuedChunks: number;
  streamMaxQueuedBytes: number;
  /** `stream: true`: milliseconds a client has to take the queued end of a finished stream. */
  streamDrainTimeoutMs: number;
  /** `stream: true`: milliseconds between keep-alive comments. */
  keepAliveMs: number;
  /** Largest event of the upstream provider's event stream, in UTF-16 code units; 502 beyond. */
  upstreamMaxEventChars: number;
}

export const DEFAULT_V1_LIMITS: Readonly<V1Limits> = {
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  ratePerMinute: DEFAULT_V1_RATE_LIMIT_PER_MINUTE,
  concurrencyPerBackend: DEFAULT_V1_CONCURRENCY_PER_BACKEND,
  resultTtlMs: DEFAULT_V1_RESULT_TTL_MS,
  sweepIntervalMs: DEFAULT_V1_SWEEP_INTERVAL_MS,
  maxJobAttempts: DEFAULT_V1_MAX_JOB_ATTEMPTS,
  maxPendingJobsPerKey: DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  jobTimeoutMs: DEFAULT_V1_JOB_TIMEOUT_MS,
  streamMaxQueuedChunks: DEFAULT_V1_STREAM_MAX_QUEUED_CHUNKS,
  streamMaxQueuedBytes: DEFAULT_V1_STREAM_MAX_QUEUED_BYTES,
  streamDrainTimeoutMs: DEFAULT_V1_STREAM_DRAIN_TIMEOUT_MS,
  keepAliveMs: DEFAULT_KEEPALIVE_MS,
  upstreamMaxEventChars: DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS,
};
