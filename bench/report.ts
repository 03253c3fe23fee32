// Rows of the benchmark report: one measured figure of our server beside the
// same figure of its baselines from the same run, the ratios, and the targets
// with their verdicts.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Machine } from "./machine.ts";
import { ratio, type Summary } from "./stats.ts";

/**
 * Who a figure is of: ours; raw Node (no protocol logic, no agent); the SDK's
 * AcpServer with its agent in the same process; the SDK's AcpServer bridging
 * the same stdio agent process ours runs ("bridge"); and the agent process
 * alone, read by a bare line reader ("bare").
 */
export const Impl = { Ours: "ours", Raw: "raw", Sdk: "sdk", Bridge: "bridge", Bare: "bare" } as const;
export type Impl = (typeof Impl)[keyof typeof Impl];

/** Column titles of the baselines, in table order. */
const BASELINES: ReadonlyArray<{ impl: Exclude<Impl, "ours">; title: string }> = [
  { impl: Impl.Raw, title: "raw" },
  { impl: Impl.Sdk, title: "sdk" },
  { impl: Impl.Bridge, title: "sdk bridge" },
  { impl: Impl.Bare, title: "agent alone" },
];

export interface Target {
  /** What is claimed, e.g. ">= 0.5× raw". */
  text: string;
  met: boolean;
  /** How far from the target: the factor of margin (>1 met, <1 missed). */
  margin: number;
}

export interface Row {
  suite: string;
  /** The case, e.g. "h2c SSE". */
  name: string;
  metric: string;
  unit: string;
  higherIsBetter: boolean;
  results: Partial<Record<Impl, Summary>>;
  /** ours / raw and ours / sdk (medians). */
  vsRaw: number;
  vsSdk: number;
  /** ours / each baseline measured in this row (medians). */
  vs: Partial<Record<Exclude<Impl, "ours">, number>>;
  targets: Target[];
  /** Facts of the run that are not timings: lost updates, N reached, exactly-once. */
  notes: string[];
  /** Correctness checks of the run (e.g. exactlyOnce, allDelivered): true when they held. */
  checks: Record<string, boolean>;
}

export function makeRow(fields: Omit<Row, "vsRaw" | "vsSdk" | "vs" | "notes" | "checks" | "targets"> & { notes?: string[]; checks?: Record<string, boolean> }): Row {
  const vs: Row["vs"] = {};
  for (const { impl } of BASELINES) {
    if (fields.results[impl] === undefined) continue;
    vs[impl] = ratio(fields.results.ours, fields.results[impl]);
  }
  return {
    ...fields,
    notes: fields.notes ?? [],
    checks: fields.checks ?? {},
    targets: [],
    vsRaw: ratio(fields.results.ours, fields.results.raw),
    vsSdk: ratio(fields.results.ours, fields.results.sdk),
    vs,
  };
}

/** A target "value <= limit" or "value >= limit" with its margin. */
export function target(text: string, value: number, limit: number, atMost: boolean): Target {
  const margin = atMost ? (value <= 0 && limit > 0 ? Number.POSITIVE_INFINITY : limit / value) : value / limit;
  return { text, met: !Number.isNaN(margin) && margin >= 1, margin };
}

/** ours / `baseline` (medians) at least `factor`, or at most when `atMost` (for costs). */
export function ratioTarget(row: Row, baseline: Exclude<Impl, "ours">, factor: number, atMost = false): Target {
  const title = BASELINES.find((b) => b.impl === baseline)?.title ?? baseline;
  return target(`${atMost ? "<=" : ">="} ${factor}× ${title}`, row.vs[baseline] ?? Number.NaN, factor, atMost);
}

/** ours − `baseline` (medians) at most `limit` (an added cost, e.g. latency over raw). */
export function addedTarget(row: Row, baseline: Exclude<Impl, "ours">, limit: number): Target {
  const title = BASELINES.find((b) => b.impl === baseline)?.title ?? baseline;
  const added = (row.results.ours?.median ?? Number.NaN) - (row.results[baseline]?.median ?? Number.NaN);
  return target(`<= ${limit} ${row.unit} over ${title}`, added, limit, true);
}

/** Ours' slowest quartile (its third quartile) at most `limit` × its median: a figure that does not fall into a slow mode. */
export function spreadTarget(row: Row, limit: number): Target {
  const ours = row.results.ours;
  return target(`slowest quartile <= ${limit}× median`, (ours?.q3 ?? Number.NaN) / (ours?.median ?? Number.NaN), limit, true);
}

/** The median of ours at least (or at most) `limit`. */
export function valueTarget(row: Row, text: string, limit: number, atMost: boolean): Target {
  return target(text, row.results.ours?.median ?? Number.NaN, limit, atMost);
}

/** A figure with three significant digits or so, thousands as k. */
export function num(v: number): string {
  if (!Number.isFinite(v)) return "-";
  const a = Math.abs(v);
  if (a >= 100_000) return `${(v / 1000).toFixed(0)}k`;
  if (a >= 10_000) return `${(v / 1000).toFixed(1)}k`;
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

function cell(s: Summary | undefined): string {
  if (s === undefined || s.runs === 0) return "-";
  return `${num(s.median)} [${num(s.min)}–${num(s.max)}]`;
}

function times(v: number): string {
  return Number.isFinite(v) ? `${v.toFixed(2)}×` : "-";
}

function verdicts(targets: readonly Target[]): string {
  return targets.map((t) => `${t.met ? "met" : "MISSED"} ${t.text} (${times(t.margin)})`).join("; ");
}

export function formatTable(rows: readonly Row[]): string {
  // Only the baselines some row measured get a column.
  const baselines = BASELINES.filter((b) => rows.some((r) => r.results[b.impl] !== undefined));
  const header = ["suite", "case", "metric", "ours median [min–max]", ...baselines.map((b) => b.title), "ours/baseline", "target"];
  const lines = rows.map((r) => [
    r.suite,
    r.name,
    `${r.metric} (${r.unit})`,
    cell(r.results.ours),
    ...baselines.map((b) => cell(r.results[b.impl])),
    baselines
      .filter((b) => r.vs[b.impl] !== undefined)
      .map((b) => `${times(r.vs[b.impl] ?? Number.NaN)} ${b.title}`)
      .join(", "),
    verdicts(r.targets),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cols: string[]): string => `| ${cols.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const out = [fmt(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)];
  const notes = rows.filter((r) => r.notes.length > 0).map((r) => `- ${r.suite} ${r.name} ${r.metric}: ${r.notes.join("; ")}`);
  const targets = rows.flatMap((r) => r.targets);
  const summary = `Targets: ${targets.filter((t) => t.met).length} met, ${targets.filter((t) => !t.met).length} missed.`;
  return [...out, "", summary, ...(notes.length > 0 ? ["", "Notes:", ...notes] : [])].join("\n");
}

export interface Report {
  startedAt: string;
  finishedAt: string;
  mode: string;
  machine: Machine & { openFiles: number };
  config: unknown;
  rows: Row[];
  errors: string[];
  profiles: string[];
}

export function writeReport(file: string, report: Report): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
