// `npm run bench`: relay throughput, a series of floods on one server,
// round-trip latency, capacity and the deferred service, each beside its baselines (raw Node, the SDK's AcpServer)
// measured in the same run; prints a table and writes bench/results/latest.json.
//
//   --smoke              tiny counts, one run (seconds; test/bench-smoke.test.ts)
//   --profile            our server (and the SDK's) under --cpu-prof, files in
//                        bench/results/profiles/, top self-time functions printed
//   --only=a,b           suites to run: relay, series, latency, capacity, deferred
//   --runs=N             repetitions of each measurement
//   --connections=N      capacity target (default 10,000)
//   --out=FILE           where the JSON goes
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runCapacity } from "./capacity.ts";
import { FULL, SMOKE, type BenchConfig } from "./config.ts";
import type { BenchContext } from "./context.ts";
import { runDeferred } from "./deferred.ts";
import { runFloodSeries } from "./flood-series.ts";
import { runLatency } from "./latency.ts";
import { thisMachine } from "./machine.ts";
import { formatTop } from "./profile-top.ts";
import { runRelay } from "./relay.ts";
import { formatTable, writeReport, type Report, type Row } from "./report.ts";

export const SUITES = {
  relay: runRelay,
  series: runFloodSeries,
  latency: runLatency,
  capacity: runCapacity,
  deferred: runDeferred,
} as const satisfies Record<string, (ctx: BenchContext) => Promise<Row[]>>;
export type SuiteName = keyof typeof SUITES;

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

export interface BenchOptions {
  smoke?: boolean;
  profile?: boolean;
  only?: SuiteName[];
  runs?: number;
  connections?: number;
  out?: string;
  log?: (line: string) => void;
}

export async function runBench(options: BenchOptions = {}): Promise<Report> {
  const base = options.smoke ? SMOKE : FULL;
  const config: BenchConfig = structuredClone(base);
  if (options.runs !== undefined) {
    config.runs = options.runs;
    config.capacity.runs = options.runs;
  }
  if (options.connections !== undefined) config.capacity.connections = options.connections;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const profileDir = options.profile ? join(RESULTS_DIR, "profiles") : undefined;
  const ctx: BenchContext = { config, log, ...(profileDir !== undefined ? { profileDir } : {}) };
  const startedAt = new Date().toISOString();
  const rows: Row[] = [];
  const errors: string[] = [];
  for (const name of options.only ?? (Object.keys(SUITES) as SuiteName[])) {
    log(`-- ${name}`);
    try {
      rows.push(...(await SUITES[name](ctx)));
    } catch (error) {
      errors.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      log(`${name} failed: ${String(error)}`);
    }
  }
  const profiles = profileDir === undefined ? [] : readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")).map((f) => join(profileDir, f));
  const report: Report = {
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: options.smoke ? "smoke" : "full",
    machine: { ...thisMachine(), openFiles: openFilesLimits()?.soft ?? Number.NaN },
    config,
    rows,
    errors,
    profiles,
  };
  writeReport(options.out ?? join(RESULTS_DIR, options.smoke ? "smoke.json" : "latest.json"), report);
  return report;
}

/** The soft and hard limits of open files of this process (POSIX shells), or undefined where there is no sh. */
function openFilesLimits(): { soft: number; hard: number } | undefined {
  try {
    const [soft, hard] = execFileSync("sh", ["-c", "ulimit -Sn; ulimit -Hn"], { encoding: "utf8" }).trim().split("\n").map(Number);
    if (soft === undefined || hard === undefined) return undefined;
    return { soft: Number.isFinite(soft) ? soft : Number.POSITIVE_INFINITY, hard: Number.isFinite(hard) ? hard : Number.POSITIVE_INFINITY };
  } catch {
    return undefined;
  }
}

/**
 * Capacity needs N sockets in the server and N in this process: run again
 * with the soft limit of open files raised to the hard one (Node cannot set
 * it itself); the servers inherit it. True when the re-run happened.
 */
function rerunWithMoreFiles(): boolean {
  const limits = openFilesLimits();
  if (limits === undefined || limits.soft >= limits.hard || process.env["BENCH_ULIMIT_RAISED"] === "1") return false;
  const result = spawnSync("sh", ["-c", 'ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"', process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, BENCH_ULIMIT_RAISED: "1" },
  });
  process.exitCode = result.status ?? 1;
  return true;
}

async function main(): Promise<void> {
  if (rerunWithMoreFiles()) return;
  const { values } = parseArgs({
    options: {
      smoke: { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      only: { type: "string" },
      runs: { type: "string" },
      connections: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const only = values.only?.split(",").map((s) => s.trim()) as SuiteName[] | undefined;
  for (const name of only ?? []) if (!(name in SUITES)) throw new Error(`--only: unknown suite "${name}" (${Object.keys(SUITES).join(", ")})`);
  const report = await runBench({
    smoke: values.smoke,
    profile: values.profile,
    ...(only !== undefined ? { only } : {}),
    ...(values.runs !== undefined ? { runs: Number(values.runs) } : {}),
    ...(values.connections !== undefined ? { connections: Number(values.connections) } : {}),
    ...(values.out !== undefined ? { out: values.out } : {}),
  });
  const m = report.machine;
  process.stdout.write(`\n${m.cpus}× ${m.cpuModel}, Node ${m.node}, ${report.mode} run, runs=${(report.config as BenchConfig).runs}, open files ${m.openFiles}\n\n`);
  process.stdout.write(`${formatTable(report.rows)}\n`);
  for (const e of report.errors) process.stdout.write(`\nERROR ${e}\n`);
  for (const file of report.profiles) process.stdout.write(`\n${formatTop(file)}\n`);
  process.exitCode = report.errors.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
