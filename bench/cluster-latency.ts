// The per-request cost of the store: deferred submissions, then polls of a
// pending job, one at a time over one HTTP/2 connection to one node, with
// p50 and p99 of each; on Redis also the commands Redis ran per request
// (INFO commandstats around each phase, so the node's heartbeat and job scan
// in the same seconds are counted too). The backend's slots are held first
// by jobs that sleep, so no job submitted here runs while it is measured:
// what is timed is the request and its store calls, not the agent. Every job
// is cancelled at the end.
import { DEFAULT_V1_CONCURRENCY_PER_BACKEND } from "../sidecar/limits.ts";
import type { ClusterBenchConfig } from "./cluster-config.ts";
import { POLL_PATH, SUBMIT_PATH, submitBody } from "./cluster-deferred.ts";
import { H2Clients, pool } from "./cluster-load.ts";
import type { RedisProbe } from "./cluster-setups.ts";
import { quantile } from "./stats.ts";
import type { Setup } from "./cluster-report.ts";

/** How long a slot-holding job sleeps: longer than any run, in milliseconds (it is cancelled at the end). */
const HOLD_MS = 3_600_000;
/** Longest wait for the store to have no job active before measuring, in milliseconds. */
const IDLE_TIMEOUT_MS = 120_000;

export interface LatencyRoute {
  setup: Setup;
  base: string;
  token: string;
  redis?: RedisProbe;
  activeJobs(): Promise<number>;
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
  const submit = async (content?: string): Promise<string | undefined> => {
    const answer = await clients.request(route.base, "POST", SUBMIT_PATH, submitBody(content));
    if (answer.status !== 200) {
      unexpected.push(`submit HTTP ${answer.status}`);
      return undefined;
    }
    const id = (JSON.parse(answer.body) as { request_id: string }).request_id;
    ids.push(id);
    return id;
  };
  try {
    const deadline = performance.now() + IDLE_TIMEOUT_MS;
    while ((await route.activeJobs()) > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // Jobs submitted first are claimed first: these take every slot and keep it.
    for (let i = 0; i < DEFAULT_V1_CONCURRENCY_PER_BACKEND; i++) await submit(`slow ${HOLD_MS}`);
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
    await pool(ids.length, 8, Number.POSITIVE_INFINITY, async (i) => {
      const answer = await clients.request(route.base, "DELETE", `${POLL_PATH}${ids[i] as string}`).catch((error: unknown) => ({ status: 0, body: String(error) }));
      if (answer.status !== 200) unexpected.push(`cancel HTTP ${answer.status}`);
    });
    clients.close();
  }
}
