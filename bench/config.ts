// How much work each benchmark does: the full run (`npm run bench`) and the
// smoke run (`--smoke`, seconds, for test/bench-smoke.test.ts). Every load loop
// is bounded both in count and in time.

export interface BenchConfig {
  /** Repetitions of each measurement; rows report their median and spread. */
  runs: number;
  relay: {
    /** Updates flooded in one prompt turn. */
    updates: number;
    /** Characters of text in each update (the JSON message is about twice that). */
    bytes: number;
    /** Updates of the warm-up turn. */
    warmup: number;
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
  relay: { updates: 20_000, bytes: 100, warmup: 2_000 },
  latency: { turns: 2_000, maxMs: 6_000, warmup: 200 },
  capacity: { connections: 10_000, concurrency: 64, maxMs: 120_000, runs: 3 },
  deferred: { submits: 2_000, polls: 20_000, pollMs: 5_000, concurrency: 32, drainMs: 120_000 },
};

export const SMOKE: BenchConfig = {
  runs: 1,
  relay: { updates: 200, bytes: 100, warmup: 20 },
  latency: { turns: 20, maxMs: 2_000, warmup: 5 },
  capacity: { connections: 10, concurrency: 5, maxMs: 20_000, runs: 1 },
  deferred: { submits: 10, polls: 50, pollMs: 2_000, concurrency: 4, drainMs: 30_000 },
};
