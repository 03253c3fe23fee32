// One deferred measurement on one setup (its base URLs: one node, the
// balancer, or every node in turn). With every slot held (cluster-slots.ts):
// measured submissions, then a batch of followed jobs, then measured polls of
// the followed ids, all answered 202 since no job runs. Then the slots are
// freed and the exactly-once check runs: every followed id is drained as its
// job finishes, each must be retrieved exactly once, and a second GET, on
// another URL of the setup, must answer 404.
import type { ClusterBenchConfig } from "./cluster-config.ts";
import { H2Clients, load, POLL_PATH, SUBMIT_PATH, submitBody, type LoadResult } from "./cluster-load.ts";
import type { JobCounts, RedisProbe } from "./cluster-setups.ts";
import { cancelJobs, holdSlots, waitIdle } from "./cluster-slots.ts";
import type { Setup } from "./cluster-report.ts";
import { pool } from "./pool.ts";

/** Pause between sweeps over the ids still pending while the jobs finish, in milliseconds. */
const DRAIN_PAUSE_MS = 20;

export interface DeferredRoute {
  setup: Setup;
  /** Base URLs the requests are spread over. */
  targets: readonly string[];
  token: string;
  /** The Redis behind the setup, whose CPU time is read around each phase. */
  redis?: RedisProbe;
  /** Nodes running the setup's jobs, each with its slots. */
  nodes: number;
  jobs: JobCounts;
  /** The URL of the node that runs job `id`, where a cancel must go; undefined: any of `targets`. */
  runnerUrl?(id: string): Promise<string | undefined>;
}

export interface DeferredRun {
  submitsPerSecond: number;
  pollsPerSecond: number;
  /** Redis CPU per measured request, in microseconds (Redis setups). */
  redisCpuPerSubmit: number;
  redisCpuPerPoll: number;
  generator: string;
  exactlyOnce: { held: boolean; detail: string };
  /** Jobs still active when the run started after waiting. */
  notIdle: number;
  /** Measured polls not answered 202 (a job ran while the slots were to be held). */
  pollsNot202: number;
}

async function withRedisCpu(route: DeferredRoute, requests: () => Promise<LoadResult>): Promise<{ result: LoadResult; cpuPerRequest: number }> {
  const before = (await route.redis?.cpuMicros()) ?? Number.NaN;
  const result = await requests();
  const after = (await route.redis?.cpuMicros()) ?? Number.NaN;
  return { result, cpuPerRequest: (after - before) / result.requests };
}

export async function deferredRun(route: DeferredRoute, config: ClusterBenchConfig["deferred"], workDir: string): Promise<DeferredRun> {
  const { submits, followed, polls, concurrency, drainMs, loadTimeoutMs } = config;
  const clients = new H2Clients(route.token);
  const targets = route.targets;
  const unexpected = new Map<string, number>();
  const count = (what: string, n = 1): void => void unexpected.set(what, (unexpected.get(what) ?? 0) + n);
  const holders: string[] = [];
  const release = async (): Promise<void> => {
    const where = async (id: string): Promise<string> => (await route.runnerUrl?.(id)) ?? (targets[0] as string);
    for (const failure of await cancelJobs(clients, where, holders.splice(0))) count(failure);
  };
  try {
    // The jobs of the previous setup or round are done: their work does not fall on this one.
    const notIdle = await waitIdle(route.jobs, drainMs);
    await holdSlots(clients, targets, route.jobs, route.nodes, drainMs, holders);
    const body = submitBody();
    const tag = route.setup.replace(/[^a-z0-9]+/gi, "-");

    const submitted = await withRedisCpu(route, () => load({ targets, requests: submits, concurrency, token: route.token, body, paths: [SUBMIT_PATH], workDir, name: `${tag}-submits`, timeoutMs: loadTimeoutMs }, clients));
    for (const [status, n] of submitted.result.statuses) if (status !== 200) count(`submit HTTP ${status}`, n);

    // The followed batch, queued behind the measured one.
    const ids: string[] = [];
    await pool(followed, concurrency, Number.POSITIVE_INFINITY, async (i) => {
      const answer = await clients.request(targets[i % targets.length] as string, "POST", SUBMIT_PATH, body);
      if (answer.status !== 200) return count(`followed submit HTTP ${answer.status}`);
      ids.push((JSON.parse(answer.body) as { request_id: string }).request_id);
    });

    const polled = await withRedisCpu(route, () =>
      load({ targets, requests: polls, concurrency, token: route.token, paths: ids.map((id) => `${POLL_PATH}${id}`), workDir, name: `${tag}-polls`, timeoutMs: loadTimeoutMs }, clients),
    );
    /** 200s (and failed jobs' 5xx) of the measured polls, whose ids the load generator does not tell: none while the slots are held. */
    let anonymous = 0;
    for (const [status, n] of polled.result.statuses) {
      if (status === 200 || status >= 500) anonymous += n;
      if (status !== 200 && status !== 202 && status !== 404) count(`poll HTTP ${status}`, n);
    }
    const pollsNot202 = polled.result.requests - (polled.result.statuses.get(202) ?? 0);
    await release();

    // Drain: each id retrieved as its job finishes, on the URLs in turn; a 404 is an id a measured poll took.
    const retrieved = new Map<string, number>();
    let pending = [...ids];
    let goneBeforeDrain = 0;
    let sweep = 0;
    const drainDeadline = performance.now() + drainMs;
    while (pending.length > 0 && performance.now() < drainDeadline) {
      const still: string[] = [];
      const round = pending;
      await pool(round.length, concurrency, Number.POSITIVE_INFINITY, async (i) => {
        const id = round[i] as string;
        const answer = await clients.request(targets[(i + sweep) % targets.length] as string, "GET", `${POLL_PATH}${id}`);
        if (answer.status === 202) return void still.push(id);
        if (answer.status === 200 || answer.status >= 500) retrieved.set(id, (retrieved.get(id) ?? 0) + 1);
        if (answer.status === 404) goneBeforeDrain++;
        else if (answer.status !== 200) count(`drain HTTP ${answer.status}`);
      });
      pending = still;
      sweep++;
      if (pending.length > 0) await new Promise((r) => setTimeout(r, DRAIN_PAUSE_MS));
    }
    // Then once more each, on another URL than the drain's last: gone everywhere.
    let secondNot404 = 0;
    await pool(ids.length, concurrency, Number.POSITIVE_INFINITY, async (i) => {
      const answer = await clients.request(targets[(i + sweep + 1) % targets.length] as string, "GET", `${POLL_PATH}${ids[i] as string}`);
      if (answer.status !== 404) secondNot404++;
    });

    const seenTwice = [...retrieved.values()].filter((n) => n > 1).length;
    const retrievals = [...retrieved.values()].reduce((a, b) => a + b, 0) + anonymous;
    const held =
      ids.length === followed && retrievals === ids.length && goneBeforeDrain === anonymous && seenTwice === 0 && secondNot404 === 0 && pending.length === 0 && unexpected.size === 0;
    const odd = [...unexpected].map(([what, n]) => `${n}× ${what}`).join(", ");
    const detail = `${ids.length} ids, ${retrievals} retrievals (${anonymous} by the measured polls), ${seenTwice} retrieved twice, ${pending.length} never finished, ${secondNot404} second GETs not 404${odd ? `, unexpected: ${odd}` : ""}`;
    return {
      submitsPerSecond: submitted.result.perSecond,
      pollsPerSecond: polled.result.perSecond,
      redisCpuPerSubmit: submitted.cpuPerRequest,
      redisCpuPerPoll: polled.cpuPerRequest,
      generator: submitted.result.generator,
      exactlyOnce: { held, detail },
      notIdle,
      pollsNot202,
    };
  } finally {
    await release().catch(() => {});
    clients.close();
  }
}
