// The per-request cost of the store: deferred submissions, then polls of a
// pending job, one at a time over one HTTP/2 connection to one node, with
// p50 and p99 of each; on Redis also the commands Redis ran per request
// (INFO commandstats around each phase, so the node's heartbeat and job scan
// in the same seconds are counted too). The backend's slots are held
// (cluster-slots.ts), so no job submitted here runs while it is measured:
// what is timed is the request and its store calls, not the agent. Every job
// is cancelled at the end.
import type { ClusterBenchConfig } from "./cluster-config.ts";
import { H2Clients, POLL_PATH, SUBMIT_PATH, submitBody } from "./cluster-load.ts";
import type { JobCounts, RedisProbe } from "./cluster-setups.ts";
import { cancelJobs, holdSlots, waitIdle } from "./cluster-slots.ts";
import { quantile } from "./stats.ts";
import type { Setup } from "./cluster-report.ts";

/** Longest wait for the store to have no job active, and for the slots to be held, in milliseconds. */
const IDLE_TIMEOUT_MS = 120_000;

export interface LatencyRoute {
  setup: Setup;
  base: string;
  token: string;
  redis?: RedisProbe;
  jobs: JobCounts;
}

export interface LatencyRun {
  submitP50: number;
  submitP99: number;
  pollP50: number;
  pollP99: number;
  /** Redis scripts (round trips) per request, and commands including those the scripts run (NaN without Redis). */
  scriptsPerSubmit: number;
  scriptsPerPoll: number;
  commandsPerSubmit: number;
  commandsPerPoll: number;
  /** Answers other than 200 (submit) and 202 (poll), and failed cancels. */
  unexpected: string[];
}

type Counts = { all: number; scripts: number } | undefined;

/** Commands (or scripts) per request between two readings of Redis's counts; NaN without Redis. */
function perRequest(before: Counts, after: Counts, requests: number, what: "all" | "scripts"): number {
  if (before === undefined || after === undefined) return Number.NaN;
  return (after[what] - before[what]) / requests;
}

export async function latencyRun(route: LatencyRoute, config: ClusterBenchConfig["latency"]): Promise<LatencyRun> {
  const clients = new H2Clients(route.token);
  const unexpected: string[] = [];
  const ids: string[] = [];
  const submit = async (): Promise<string | undefined> => {
    const answer = await clients.request(route.base, "POST", SUBMIT_PATH, submitBody());
    if (answer.status !== 200) {
      unexpected.push(`submit HTTP ${answer.status}`);
      return undefined;
    }
    const id = (JSON.parse(answer.body) as { request_id: string }).request_id;
    ids.push(id);
    return id;
  };
  try {
    await waitIdle(route.jobs, IDLE_TIMEOUT_MS);
    await holdSlots(clients, [route.base], route.jobs, 1, IDLE_TIMEOUT_MS, ids);
    for (let i = 0; i < config.warmup; i++) await submit();

    const submitMs: number[] = [];
    const commandsBeforeSubmits = await route.redis?.commands();
    for (let i = 0; i < config.submits; i++) {
      const start = performance.now();
      await submit();
      submitMs.push(performance.now() - start);
    }
    const commandsAfterSubmits = await route.redis?.commands();

    const waiting = ids[ids.length - 1];
    if (waiting === undefined) throw new Error(`${route.setup}: no job was submitted`);
    const pollMs: number[] = [];
    for (let i = 0; i < config.warmup; i++) await clients.request(route.base, "GET", `${POLL_PATH}${waiting}`);
    const commandsBeforePolls = await route.redis?.commands();
    for (let i = 0; i < config.polls; i++) {
      const start = performance.now();
      const answer = await clients.request(route.base, "GET", `${POLL_PATH}${waiting}`);
      pollMs.push(performance.now() - start);
      if (answer.status !== 202) unexpected.push(`poll HTTP ${answer.status}`);
    }
    const commandsAfterPolls = await route.redis?.commands();

    return {
      submitP50: quantile(submitMs, 0.5),
      submitP99: quantile(submitMs, 0.99),
      pollP50: quantile(pollMs, 0.5),
      pollP99: quantile(pollMs, 0.99),
      scriptsPerSubmit: perRequest(commandsBeforeSubmits, commandsAfterSubmits, config.submits, "scripts"),
      scriptsPerPoll: perRequest(commandsBeforePolls, commandsAfterPolls, config.polls, "scripts"),
      commandsPerSubmit: perRequest(commandsBeforeSubmits, commandsAfterSubmits, config.submits, "all"),
      commandsPerPoll: perRequest(commandsBeforePolls, commandsAfterPolls, config.polls, "all"),
      unexpected,
    };
  } finally {
    unexpected.push(...(await cancelJobs(clients, async () => route.base, ids)));
    clients.close();
  }
}
