// Rows of the benchmark report: one measured figure of our server beside the
// same figure of its baselines from the same run, the ratios, and the target.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ratio, type Summary } from "./stats.ts";

export const Impl = { Ours: "ours", Raw: "raw", Sdk: "sdk" } as const;
export type Impl = (typeof Impl)[keyof typeof Impl];

export interface Target {
  /** What is claimed, e.g. ">= 50% of raw". */
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
  target?: Target;
  /** Facts of the run that are not timings: lost updates, N reached, exactly-once. */
  notes: string[];
  /** Correctness checks of the run (e.g. exactlyOnce, allDelivered): true when they held. */
  checks: Record<string, boolean>;
}

export function makeRow(fields: Omit<Row, "vsRaw" | "vsSdk" | "notes" | "checks"> & { notes?: string[]; checks?: Record<string, boolean> }): Row {
  return {
    ...fields,
    notes: fields.notes ?? [],
    checks: fields.checks ?? {},
    vsRaw: ratio(fields.results.ours, fields.results.raw),
    vsSdk: ratio(fields.results.ours, fields.results.sdk),
  };
}

/** A target "value <= limit" or "value >= limit" with its margin. */
export function target(text: string, value: number, limit: number, atMost: boolean): Target {
  const margin = atMost ? limit / value : value / limit;
  return { text, met: Number.isFinite(margin) && margin >= 1, margin };
}

function num(v: number): string {
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

export function formatTable(rows: readonly Row[]): string {
  const header = ["suite", "case", "metric", "ours median [min–max]", "raw", "sdk", "ours/raw", "ours/sdk", "target"];
  const lines = rows.map((r) => [
    r.suite,
    r.name,
    `${r.metric} (${r.unit})`,
    cell(r.results.ours),
    cell(r.results.raw),
    cell(r.results.sdk),
    times(r.vsRaw),
    times(r.vsSdk),
    r.target === undefined ? "" : `${r.target.met ? "met" : "MISSED"} ${r.target.text} (${times(r.target.margin)})`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cols: string[]): string => `| ${cols.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const out = [fmt(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)];
  const notes = rows.filter((r) => r.notes.length > 0).map((r) => `- ${r.suite} ${r.name} ${r.metric}: ${r.notes.join("; ")}`);
  return [...out, ...(notes.length > 0 ? ["", "Notes:", ...notes] : [])].join("\n");
}

export interface Report {
  startedAt: string;
  finishedAt: string;
  mode: string;
  machine: { cpus: number; cpuModel: string; node: string; platform: string; totalMemMiB: number; openFiles: number };
  config: unknown;
  rows: Row[];
  errors: string[];
  profiles: string[];
}

export function writeReport(file: string, report: Report): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
