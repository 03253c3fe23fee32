// Preloaded (`node --import`) into each `acp-remote serve` of the cluster
// benchmark (bench/cluster.ts): lifts the /v1 per-person rate limit (60 a
// minute) and the cap of pending jobs per person before the CLI reads them,
// as bench/deferred.ts does for its own server, so that the bench measures
// the service and not its admission control. Every check still runs: on
// Redis the rate bucket is still taken, one script a request; it just never
// refuses. Nothing else of the node changes: same CLI, same flags.
import type { V1Limits } from "../sidecar/v1/config.ts";

/** Requests a minute per person, and pending jobs per person: beyond anything a run makes. */
const LIFTED = 1e9;

// NODE_OPTIONS carried this module here: the node's agent processes must not inherit it.
delete process.env["NODE_OPTIONS"];
const { DEFAULT_V1_LIMITS } = await import("../sidecar/v1/config.ts");
Object.assign(DEFAULT_V1_LIMITS as V1Limits, { ratePerMinute: LIFTED, maxPendingJobsPerKey: LIFTED });
