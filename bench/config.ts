// How much work each benchmark does: the full run (`npm run bench`) and the
// smoke run (`--smoke`, seconds, for test/bench-smoke.test.ts), and the
// targets the report judges. Every load loop is bounded both in count and in
// time.

/**
 * What the report holds our server to (docs/performance.md, "The targets").
 * Relay figures are taken with the fast agent (fast-agent.ts) unless said
 * otherwise, so that they measure the relay and not its agent.
 */
export const TARGETS = {
  relay: {
    /** Updates/s at least this × raw Node's, on every profile. */
    vsRaw: 0.5,
    /** On HTTP/2 (h2c, h2 TLS): at least this × the SDK's AcpServer with its in-process agent. */
    vsSdk: 1.0,
    /** On HTTP/2: at least this × the SDK's AcpServer bridging the same stdio agent. */
    vsBridge: 2.0,
    /** Our server's CPU per relayed update at most this × raw Node's per written event. */
    cpuVsRaw: 2.0,
    /** With the SDK-written agent: at least this × what that agent emits to a bare line reader. */
    vsBareAgent: 0.9,
  },
  latency: {
    /** Round trip p99, on every profile, in milliseconds. */
    p99Ms: 3,
    /** Round trip p50 added over raw Node's, in milliseconds. */
    addedP50Ms: 0.25,
  },
  series: {
    /** Ours' slowest quartile of floods at most this × its median, in CPU per update. */
    slowQuartileVsMedian: 1.3,
  },
  capacity: {
    /** RSS the target allows for `connections`, in bytes. */
    rssBytes: 1024 ** 3,
    connections: 10_000,
  },
  deferred: {
    submitsPerSecond: 5_000,
    pollsPerSecond: 20_000,
  },
} as const;

export interface BenchConfig {
  /** Repetitions of each measurement; rows report their median and spread. */
  runs: number;
  relay: {
    /** Updates flooded in one prompt turn. */
    updates: number;
    /** Characters of text in each update (the JSON message is about twice that). */
    bytes: number;
    /** Updates of each warm-up turn. */
    warmup: number;
    /**
     * Warm-up turns of each contestant before its first measured one. A server
     * process is slow for its first floods (its heap, its compiled code and its
     * store's files grow to their working size): our relay spent 18 µs per
     * update on its first flood of 20,000 and 5-6 from the third on, so a case
     * measured first, or on a server no earlier case used, came out half as
     * fast as the same case measured later.
     */
    warmupTurns: number;
  };
  series: {
    /** Measured floods of each contestant, one after another on one server, the contestants in turns. */
    floods: number;
    /** Updates of each flood. */
    updates: number;
    /** Characters of text in each update. */
    bytes: number;
    /** Warm-up floods of each contestant before the measured ones. */
    warmupTurns: number;
    /**
     * Time each server sits idle between two of its floods, in milliseconds:
     * a server is idle between turns, and V8 shrinks the heap of an idle
     * process, which is what the next flood then meets.
     */
    idleMs: number;
  };
  latency: {
    /** Most turns in one run. */
    turns: number;
    /** Longest time of one run, in milliseconds. */
    maxMs: number;
    warmup: number;
  };
  capacity: {
    /** Connections aimed for (each with its connection and session stream open). */
    connections: number;
    /** Connections being opened at once. */
    concurrency: number;
    /** Longest time to open them all, in milliseconds. */
    maxMs: number;
    runs: number;
  };
  deferred: {
    /** Deferred submissions in one run. */
    submits: number;
    /** Most polls in one run, and the longest time they may take, in milliseconds. */
    polls: number;
    pollMs: number;
    /** Requests in flight at once on the one HTTP/2 connection. */
    concurrency: number;
    /** Longest wait for every job to finish before the exactly-once check, in milliseconds. */
    drainMs: number;
  };
}

export const FULL: BenchConfig = {
  runs: 5,
  relay: { updates: 20_000, bytes: 100, warmup: 20_000, warmupTurns: 3 },
  series: { floods: 24, updates: 20_000, bytes: 100, warmupTurns: 3, idleMs: 3_000 },
  latency: { turns: 2_000, maxMs: 6_000, warmup: 200 },
  capacity: { connections: 10_000, concurrency: 64, maxMs: 120_000, runs: 3 },
  deferred: { submits: 2_000, polls: 20_000, pollMs: 5_000, concurrency: 32, drainMs: 120_000 },
};

export const SMOKE: BenchConfig = {
  runs: 1,
  relay: { updates: 200, bytes: 100, warmup: 20, warmupTurns: 1 },
  series: { floods: 4, updates: 200, bytes: 100, warmupTurns: 1, idleMs: 0 },
  latency: { turns: 20, maxMs: 2_000, warmup: 5 },
  capacity: { connections: 10, concurrency: 5, maxMs: 20_000, runs: 1 },
  deferred: { submits: 10, polls: 50, pollMs: 2_000, concurrency: 4, drainMs: 30_000 },
};
