// Rows of the cluster benchmark: each figure of each setup as the median of
// the rounds with its spread, beside the same figure of one node on SQLite
// from the same run (a ratio of medians; for latencies also the difference).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Machine } from "./machine.ts";
import { num } from "./report.ts";
import { ratio, summarize, type Summary } from "./stats.ts";

export const Setup = {
  Sqlite: "1 node, SQLite",
  Redis: "1 node, Redis",
  Haproxy: "3 nodes, Redis, HAProxy",
  RoundRobin: "3 nodes, Redis, round-robin",
  Link: "home n1, through n2",
} as const;
export type Setup = (typeof Setup)[keyof typeof Setup];

/** Every figure is set against this setup's. */
export const BASELINE: Setup = Setup.Sqlite;

export const Section = { Deferred: "deferred", Relay: "relay", StoreCost: "store cost" } as const;
export type Section = (typeof Section)[keyof typeof Section];

export const Metric = {
  SubmitsPerSecond: "submits/s",
  PollsPerSecond: "polls/s",
  RedisCpuPerSubmit: "Redis CPU per submit",
  RedisCpuPerPoll: "Redis CPU per poll",
  UpdatesPerSecond: "updates/s",
  SidecarCpuPerUpdate: "sidecar CPU per update",
  RedisCpuPerUpdate: "Redis CPU per update",
  SubmitP50: "submit p50",
  SubmitP99: "submit p99",
  PollP50: "poll p50",
  PollP99: "poll p99",
  ScriptsPerSubmit: "Redis round trips (scripts) per submit",
  ScriptsPerPoll: "Redis round trips (scripts) per poll",
  CommandsPerSubmit: "Redis commands per submit, inside scripts too",
  CommandsPerPoll: "Redis commands per poll, inside scripts too",
} as const;
export type Metric = (typeof Metric)[keyof typeof Metric];

interface MetricSpec {
  section: Section;
  metric: Metric;
  unit: string;
  higherIsBetter: boolean;
  setups: readonly Setup[];
  /** Latencies: the table shows the difference to the baseline as well. */
  added?: boolean;
}

const ALL_DEFERRED = [Setup.Sqlite, Setup.Redis, Setup.Haproxy, Setup.RoundRobin] as const;
const REDIS_DEFERRED = [Setup.Redis, Setup.Haproxy, Setup.RoundRobin] as const;
const ALL_RELAY = [Setup.Sqlite, Setup.Redis, Setup.Link, Setup.Haproxy] as const;
const REDIS_RELAY = [Setup.Redis, Setup.Link, Setup.Haproxy] as const;
const ONE_NODE = [Setup.Sqlite, Setup.Redis] as const;

/** Every row the benchmark produces, in table order. */
export const METRICS: readonly MetricSpec[] = [
  { section: Section.Deferred, metric: Metric.SubmitsPerSecond, unit: "1/s", higherIsBetter: true, setups: ALL_DEFERRED },
  { section: Section.Deferred, metric: Metric.PollsPerSecond, unit: "1/s", higherIsBetter: true, setups: ALL_DEFERRED },
  { section: Section.Deferred, metric: Metric.RedisCpuPerSubmit, unit: "µs", higherIsBetter: false, setups: REDIS_DEFERRED },
  { section: Section.Deferred, metric: Metric.RedisCpuPerPoll, unit: "µs", higherIsBetter: false, setups: REDIS_DEFERRED },
  { section: Section.Relay, metric: Metric.UpdatesPerSecond, unit: "1/s", higherIsBetter: true, setups: ALL_RELAY },
  { section: Section.Relay, metric: Metric.SidecarCpuPerUpdate, unit: "µs", higherIsBetter: false, setups: ALL_RELAY },
  { section: Section.Relay, metric: Metric.RedisCpuPerUpdate, unit: "µs", higherIsBetter: false, setups: REDIS_RELAY },
  { section: Section.StoreCost, metric: Metric.SubmitP50, unit: "ms", higherIsBetter: false, setups: ONE_NODE, added: true },
  { section: Section.StoreCost, metric: Metric.SubmitP99, unit: "ms", higherIsBetter: false, setups: ONE_NODE, added: true },
  { section: Section.StoreCost, metric: Metric.PollP50, unit: "ms", higherIsBetter: false, setups: ONE_NODE, added: true },
  { section: Section.StoreCost, metric: Metric.PollP99, unit: "ms", higherIsBetter: false, setups: ONE_NODE, added: true },
  { section: Section.StoreCost, metric: Metric.ScriptsPerSubmit, unit: "count", higherIsBetter: false, setups: [Setup.Redis] },
  { section: Section.StoreCost, metric: Metric.ScriptsPerPoll, unit: "count", higherIsBetter: false, setups: [Setup.Redis] },
  { section: Section.StoreCost, metric: Metric.CommandsPerSubmit, unit: "count", higherIsBetter: false, setups: [Setup.Redis] },
  { section: Section.StoreCost, metric: Metric.CommandsPerPoll, unit: "count", higherIsBetter: false, setups: [Setup.Redis] },
];

export interface ClusterRow {
  section: Section;
  setup: Setup;
  metric: Metric;
  unit: string;
  higherIsBetter: boolean;
  summary: Summary;
  /** This setup's median over the baseline's (NaN where the baseline has no such figure). */
  vsBaseline: number;
  /** This setup's median minus the baseline's (latencies only). */
  added?: number;
}

/** Values per round, keyed by section, metric and setup. */
export class Samples {
  readonly #values = new Map<string, number[]>();

  static key(section: Section, metric: Metric, setup: Setup): string {
    return `${section}\u0000${metric}\u0000${setup}`;
  }

  add(section: Section, metric: Metric, setup: Setup, value: number): void {
    const key = Samples.key(section, metric, setup);
    const list = this.#values.get(key) ?? [];
    list.push(value);
    this.#values.set(key, list);
  }

  get(section: Section, metric: Metric, setup: Setup): number[] {
    return this.#values.get(Samples.key(section, metric, setup)) ?? [];
  }

  rows(): ClusterRow[] {
    const rows: ClusterRow[] = [];
    for (const spec of METRICS) {
      const baseline = summarize(this.get(spec.section, spec.metric, BASELINE));
      for (const setup of spec.setups) {
        const summary = summarize(this.get(spec.section, spec.metric, setup));
        rows.push({
          section: spec.section,
          setup,
          metric: spec.metric,
          unit: spec.unit,
          higherIsBetter: spec.higherIsBetter,
          summary,
          vsBaseline: baseline.runs > 0 ? ratio(summary, baseline) : Number.NaN,
          ...(spec.added ? { added: summary.median - baseline.median } : {}),
        });
      }
    }
    return rows;
  }
}

export function formatClusterTable(rows: readonly ClusterRow[]): string {
  const header = ["section", "setup", "metric", "median [min–max]", `× ${BASELINE}`, "added"];
  const lines = rows.map((r) => [
    r.section,
    r.setup,
    `${r.metric} (${r.unit})`,
    r.summary.runs === 0 ? "-" : `${num(r.summary.median)} [${num(r.summary.min)}–${num(r.summary.max)}]`,
    r.setup === BASELINE || !Number.isFinite(r.vsBaseline) ? "-" : `${r.vsBaseline.toFixed(2)}×`,
    r.added === undefined || r.setup === BASELINE ? "" : `${r.added >= 0 ? "+" : ""}${num(r.added)} ${r.unit}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cols: string[]): string => `| ${cols.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [fmt(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)].join("\n");
}

export interface ClusterReport {
  startedAt: string;
  finishedAt: string;
  mode: "full" | "smoke";
  runs: number;
  machine: Machine & { loadAverageAtStart: number[] };
  tools: Record<string, string>;
  /** Redis's appendfsync. */
  fsync: string;
  config: unknown;
  rows: ClusterRow[];
  /** Correctness of the run: exactly-once per deferred setup, every update delivered per relay setup. */
  checks: Record<string, boolean>;
  notes: string[];
  errors: string[];
}

export function writeClusterReport(file: string, report: ClusterReport): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
