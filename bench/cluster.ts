// `npm run bench:cluster`: several nodes on one Redis against one node on
// the embedded SQLite store, measured in the same run. Every round measures
// every setup in turn (rotating who goes first, so a noisy minute falls on
// all of them); rows report medians over the rounds and their ratio to one
// node on SQLite. Prints a table and writes bench/results/cluster.json.
//
//   deferred    submits/s and polls/s (h2load) while sleeping jobs hold every
//               slot (so the agents run nothing meanwhile), then exactly-once:
//               one node on SQLite; one node on Redis; three nodes on Redis
//               behind HAProxy; the same three nodes, requests spread over
//               their own URLs
//   relay       session/updates per second over one WebSocket with a flood
//               prompt: one node on SQLite; one node on Redis; a session
//               whose home is n1, loaded and prompted through n2 (the
//               node-to-node link); three nodes behind HAProxy
//   store cost  p50 and p99 of sequential submits and polls on one node,
//               SQLite against Redis, and Redis commands per request
//
//   --runs=N            rounds (default 3)
//   --smoke             tiny counts, one round (test/bench-cluster-smoke.test.ts)
//   --fsync=MODE        Redis appendfsync: everysec (default) or always
//   --out=FILE          where the JSON goes
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import { clusterToolsMissing } from "../test/helpers/cluster.ts";
import { removeOnExit } from "../test/helpers/managed-process.ts";
import { CLUSTER_FULL, CLUSTER_SMOKE, type ClusterBenchConfig } from "./cluster-config.ts";
import { deferredRun, type DeferredRoute } from "./cluster-deferred.ts";
import { latencyRun, type LatencyRoute } from "./cluster-latency.ts";
import { formatClusterTable, Metric, Samples, Section, Setup, writeClusterReport, type ClusterReport } from "./cluster-report.ts";
import { openRelay, RelayClient, relayRun, servingNode, type RelayRoute } from "./cluster-relay.ts";
import { sqliteJobs, startFleet, type Fleet, type Fsync } from "./cluster-setups.ts";
import { firstLines } from "./context.ts";
import { ensureH2load } from "./h2load.ts";
import { thisMachine } from "./machine.ts";

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

export interface ClusterBenchOptions {
  smoke?: boolean;
  runs?: number;
  fsync?: Fsync;
  out?: string;
  log?: (line: string) => void;
}

/** The i-th ordering of `items`: rotated by the round, so each goes first in turn. */
function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, k) => items[(round + k) % items.length] as T);
}

function deferredRoutes(fleet: Fleet): DeferredRoute[] {
  const { cluster, redisShared } = fleet;
  const token = cluster.token;
  const shared = {
    token,
    redis: redisShared,
    jobs: redisShared,
    nodes: cluster.nodes.length,
    async runnerUrl(id: string): Promise<string | undefined> {
      const node = await redisShared.runnerOf(id);
      return node === undefined ? undefined : cluster.nodeById(node).url;
    },
  };
  return [
    { setup: Setup.Sqlite, targets: [fleet.sqlite.url], token, jobs: sqliteJobs(fleet.sqlite.node(0).dataDir), nodes: 1 },
    { setup: Setup.Redis, targets: [fleet.redisNode.url], token, redis: fleet.redisOne, jobs: fleet.redisOne, nodes: 1 },
    { setup: Setup.Haproxy, targets: [cluster.url], ...shared },
    { setup: Setup.RoundRobin, targets: cluster.nodes.map((n) => n.url), ...shared },
  ];
}

function relayRoutes(fleet: Fleet): RelayRoute[] {
  const { cluster, redisShared } = fleet;
  const token = cluster.token;
  const fresh = async (base: string): Promise<RelayClient> => {
    const client = await RelayClient.open(base, token);
    await client.newSession();
    return client;
  };
  return [
    { setup: Setup.Sqlite, open: async () => ({ client: await fresh(fleet.sqlite.url), note: "" }), nodePids: () => [fleet.sqlite.node(0).pid] },
    { setup: Setup.Redis, open: async () => ({ client: await fresh(fleet.redisNode.url), note: "" }), nodePids: () => [fleet.redisNode.node(0).pid], redis: fleet.redisOne },
    {
      setup: Setup.Link,
      async open() {
        const [home, via] = [cluster.node(0), cluster.node(1)];
        const maker = await RelayClient.open(home.url, token);
        const sessionId = await maker.newSession();
        maker.close();
        const client = await RelayClient.open(via.url, token);
        await client.loadSession(sessionId);
        const parent = await servingNode(client);
        if (parent !== home.pid) {
          client.close();
          throw new Error(`the session's agent runs under pid ${parent}, not under its home ${home.id} (${home.pid}): the turns do not cross the link`);
        }
        return { client, note: `made on ${home.id}, loaded through ${via.id}: its agent runs under ${home.id}` };
      },
      nodePids: () => cluster.nodes.map((n) => n.pid),
      redis: redisShared,
    },
    {
      setup: Setup.Haproxy,
      async open() {
        const client = await fresh(cluster.url);
        const parent = await servingNode(client);
        return { client, note: `HAProxy put the session on ${cluster.nodes.find((n) => n.pid === parent)?.id ?? `pid ${parent}`}` };
      },
      nodePids: () => cluster.nodes.map((n) => n.pid),
      redis: redisShared,
    },
  ];
}

function latencyRoutes(fleet: Fleet): LatencyRoute[] {
  const token = fleet.cluster.token;
  return [
    { setup: Setup.Sqlite, base: fleet.sqlite.url, token, jobs: sqliteJobs(fleet.sqlite.node(0).dataDir) },
    { setup: Setup.Redis, base: fleet.redisNode.url, token, redis: fleet.redisOne, jobs: fleet.redisOne },
  ];
}

function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0]?.trim() ?? "?";
  } catch {
    return "not installed";
  }
}

export async function runClusterBench(options: ClusterBenchOptions = {}): Promise<ClusterReport> {
  const config: ClusterBenchConfig = structuredClone(options.smoke ? CLUSTER_SMOKE : CLUSTER_FULL);
  if (options.runs !== undefined) config.runs = options.runs;
  const fsync = options.fsync ?? "everysec";
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const missing = clusterToolsMissing("haproxy", { redis: true });
  if (missing !== undefined) throw new Error(`the cluster benchmark needs Redis and HAProxy: ${missing}`);
  ensureH2load(log);
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  const samples = new Samples();
  const checks: Record<string, boolean> = {};
  const notes: string[] = [];
  const errors: string[] = [];
  const fail = (what: string, error: unknown): void => {
    errors.push(`${what}: ${firstLines(error)}`);
    log(`${what} failed: ${(error as Error).message}`);
  };
  const workDir = mkdtempSync(join(tmpdir(), "acp-remote-bench-cluster-"));
  const forgetWorkDir = removeOnExit(workDir);
  let fleet: Fleet | undefined;
  const relayClients = new Map<Setup, RelayClient>();
  try {
    fleet = await startFleet(fsync, log);
    const deferred = deferredRoutes(fleet);
    const relays = relayRoutes(fleet);
    const latencies = latencyRoutes(fleet);
    const generators = new Set<string>();
    for (const route of relays) {
      checks[`relay ${route.setup}: every update delivered`] = false;
      try {
        const { client, note } = await openRelay(route, config.relay);
        relayClients.set(route.setup, client);
        checks[`relay ${route.setup}: every update delivered`] = true;
        if (note) notes.push(`relay ${route.setup}: ${note}`);
      } catch (error) {
        fail(`relay ${route.setup}: open`, error);
      }
    }
    for (const route of deferred) checks[`deferred ${route.setup}: exactly once`] = true;

    for (let round = 0; round < config.runs; round++) {
      log(`-- round ${round + 1} of ${config.runs}`);
      for (const route of rotated(deferred, round)) {
        const check = `deferred ${route.setup}: exactly once`;
        try {
          const r = await deferredRun(route, config.deferred, workDir);
          generators.add(r.generator);
          samples.add(Section.Deferred, Metric.SubmitsPerSecond, route.setup, r.submitsPerSecond);
          samples.add(Section.Deferred, Metric.PollsPerSecond, route.setup, r.pollsPerSecond);
          if (route.redis !== undefined) {
            samples.add(Section.Deferred, Metric.RedisCpuPerSubmit, route.setup, r.redisCpuPerSubmit);
            samples.add(Section.Deferred, Metric.RedisCpuPerPoll, route.setup, r.redisCpuPerPoll);
          }
          if (!r.exactlyOnce.held) notes.push(`deferred ${route.setup} round ${round + 1}: exactly-once VIOLATED: ${r.exactlyOnce.detail}`);
          else if (round === 0) notes.push(`deferred ${route.setup}: exactly-once held (round 1: ${r.exactlyOnce.detail})`);
          if (r.pollsNot202 > 0) notes.push(`deferred ${route.setup} round ${round + 1}: ${r.pollsNot202} measured polls not answered 202 (a job ran while every slot was to be held)`);
          if (r.notIdle > 0) notes.push(`deferred ${route.setup} round ${round + 1}: ${r.notIdle} jobs still active when it started`);
          checks[check] = (checks[check] ?? true) && r.exactlyOnce.held;
          log(`deferred ${route.setup}: ${r.submitsPerSecond.toFixed(0)} submits/s, ${r.pollsPerSecond.toFixed(0)} polls/s, exactly-once ${r.exactlyOnce.held ? "held" : "VIOLATED"}`);
        } catch (error) {
          checks[check] = false;
          fail(`deferred ${route.setup} round ${round + 1}`, error);
        }
      }
      for (const route of rotated(relays, round)) {
        const client = relayClients.get(route.setup);
        if (client === undefined) continue;
        const check = `relay ${route.setup}: every update delivered`;
        try {
          const r = await relayRun(route, client, config.relay);
          if (r.error !== undefined || r.lost !== 0) {
            checks[check] = false;
            notes.push(`relay ${route.setup} round ${round + 1}: ${r.error !== undefined ? `the prompt failed: ${r.error}; ` : ""}${r.lost} of ${config.relay.updates} updates lost`);
            continue;
          }
          samples.add(Section.Relay, Metric.UpdatesPerSecond, route.setup, r.rate);
          samples.add(Section.Relay, Metric.SidecarCpuPerUpdate, route.setup, r.nodeCpu);
          if (route.redis !== undefined) samples.add(Section.Relay, Metric.RedisCpuPerUpdate, route.setup, r.redisCpu);
          log(`relay ${route.setup}: ${r.rate.toFixed(0)} updates/s`);
        } catch (error) {
          checks[check] = false;
          relayClients.delete(route.setup);
          client.close();
          fail(`relay ${route.setup} round ${round + 1}`, error);
        }
      }
      for (const route of rotated(latencies, round)) {
        try {
          const r = await latencyRun(route, config.latency);
          samples.add(Section.StoreCost, Metric.SubmitP50, route.setup, r.submitP50);
          samples.add(Section.StoreCost, Metric.SubmitP99, route.setup, r.submitP99);
          samples.add(Section.StoreCost, Metric.PollP50, route.setup, r.pollP50);
          samples.add(Section.StoreCost, Metric.PollP99, route.setup, r.pollP99);
          if (route.redis !== undefined) {
            samples.add(Section.StoreCost, Metric.ScriptsPerSubmit, route.setup, r.scriptsPerSubmit);
            samples.add(Section.StoreCost, Metric.ScriptsPerPoll, route.setup, r.scriptsPerPoll);
            samples.add(Section.StoreCost, Metric.CommandsPerSubmit, route.setup, r.commandsPerSubmit);
            samples.add(Section.StoreCost, Metric.CommandsPerPoll, route.setup, r.commandsPerPoll);
          }
          if (r.unexpected.length > 0) errors.push(`store cost ${route.setup} round ${round + 1}: unexpected answers: ${[...new Set(r.unexpected)].join(", ")}`);
          log(`store cost ${route.setup}: submit p50 ${r.submitP50.toFixed(3)} ms, poll p50 ${r.pollP50.toFixed(3)} ms`);
        } catch (error) {
          fail(`store cost ${route.setup} round ${round + 1}`, error);
        }
      }
    }
    notes.push(`deferred requests measured by ${[...generators].join(" and ") || "nothing"}; Redis appendfsync ${fsync}`);
  } finally {
    for (const client of relayClients.values()) client.close();
    await fleet?.close();
    rmSync(workDir, { recursive: true, force: true });
    forgetWorkDir();
  }
  const report: ClusterReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: options.smoke ? "smoke" : "full",
    runs: config.runs,
    machine: { ...thisMachine(), loadAverageAtStart },
    tools: { redis: version("redis-server", ["--version"]), haproxy: version("haproxy", ["-v"]), h2load: version("h2load", ["--version"]) },
    fsync,
    config,
    rows: samples.rows(),
    checks,
    notes,
    errors,
  };
  writeClusterReport(options.out ?? join(RESULTS_DIR, options.smoke ? "cluster-smoke.json" : "cluster.json"), report);
  return report;
}

async function main(): Promise<void> {
  // Stopped from outside: exit through process.exit, whose 'exit' hook
  // (test/helpers/managed-process.ts) kills the nodes, Redis and HAProxy and removes their folders.
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) process.once(signal, () => process.exit(code));
  const { values } = parseArgs({
    options: {
      smoke: { type: "boolean", default: false },
      runs: { type: "string" },
      fsync: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const runs = values.runs === undefined ? undefined : Number(values.runs);
  if (runs !== undefined && !(Number.isInteger(runs) && runs >= 1)) throw new Error(`--runs must be a whole number of at least 1, not "${values.runs}"`);
  if (values.fsync !== undefined && values.fsync !== "everysec" && values.fsync !== "always") throw new Error(`--fsync must be everysec or always, not "${values.fsync}"`);
  const report = await runClusterBench({
    smoke: values.smoke,
    ...(runs !== undefined ? { runs } : {}),
    ...(values.fsync !== undefined ? { fsync: values.fsync as Fsync } : {}),
    ...(values.out !== undefined ? { out: values.out } : {}),
  });
  const m = report.machine;
  process.stdout.write(`\n${m.cpus}× ${m.cpuModel}, ${m.totalMemMiB} MiB, Node ${m.node}, ${report.tools["redis"]}, ${report.tools["haproxy"]}, ${report.tools["h2load"]}\n`);
  process.stdout.write(`${report.mode} run, ${report.runs} rounds, Redis appendfsync ${report.fsync}, load average at start ${m.loadAverageAtStart.join(" ")}\n\n`);
  process.stdout.write(`${formatClusterTable(report.rows)}\n`);
  const failed = Object.entries(report.checks).filter(([, held]) => !held);
  process.stdout.write(`\nChecks: ${Object.keys(report.checks).length - failed.length} held, ${failed.length} failed${failed.length > 0 ? `: ${failed.map(([name]) => name).join("; ")}` : ""}.\n`);
  if (report.notes.length > 0) process.stdout.write(`\nNotes:\n${report.notes.map((n) => `- ${n}`).join("\n")}\n`);
  for (const e of report.errors) process.stdout.write(`\nERROR ${e}\n`);
  process.exitCode = report.errors.length > 0 || failed.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
