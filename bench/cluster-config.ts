// How much work the cluster benchmark (bench/cluster.ts) does: the full run
// and the smoke run (`--smoke`, tiny counts, for
// test/bench-cluster-smoke.test.ts). Every loop is bounded in count and in time.

export interface ClusterBenchConfig {
  /** Rounds; each measures every setup in turn, and rows report the median over rounds. */
  runs: number;
  deferred: {
    /** Submissions measured (their ids are not followed; their jobs run like any other). */
    submits: number;
    /**
     * Jobs submitted after the measured ones, whose ids are followed: they
     * wait behind the measured ones, so the measured polls mostly find them
     * pending (202); then each is drained and checked for exactly-once.
     */
    followed: number;
    /** Polls measured, spread over the followed ids. */
    polls: number;
    /** Requests in flight at once, over all the connections of a setup. */
    concurrency: number;
    /** Longest wait for every followed job to finish, in milliseconds. */
    drainMs: number;
    /** Longest a load generator may run, in milliseconds. */
    loadTimeoutMs: number;
  };
  relay: {
    /** Updates of the measured flood turn. */
    updates: number;
    /** Characters of text in each update. */
    bytes: number;
    /** Updates of the warm-up turn. */
    warmup: number;
    /** Longest one flood turn may take, in milliseconds. */
    turnTimeoutMs: number;
  };
  latency: {
    /** Sequential submissions measured, after `warmup` unmeasured ones. */
    submits: number;
    /** Sequential polls of a pending job measured. */
    polls: number;
    warmup: number;
  };
}

export const CLUSTER_FULL: ClusterBenchConfig = {
  runs: 3,
  deferred: { submits: 2_000, followed: 1_000, polls: 20_000, concurrency: 32, drainMs: 180_000, loadTimeoutMs: 120_000 },
  relay: { updates: 20_000, bytes: 100, warmup: 2_000, turnTimeoutMs: 120_000 },
  latency: { submits: 1_000, polls: 2_000, warmup: 100 },
};

export const CLUSTER_SMOKE: ClusterBenchConfig = {
  runs: 1,
  deferred: { submits: 20, followed: 10, polls: 100, concurrency: 4, drainMs: 60_000, loadTimeoutMs: 30_000 },
  relay: { updates: 200, bytes: 100, warmup: 20, turnTimeoutMs: 30_000 },
  latency: { submits: 20, polls: 40, warmup: 5 },
};
