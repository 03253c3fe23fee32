// 5. Flood series: many floods on one server, to see the spread and not only
// the median. Over h2c and h2 (TLS), our server with the fast agent and raw
// Node take `floods` floods of `updates` agent_message_chunk updates each, in
// turns (rotating who goes first), each server idle for `idleMs` between two
// of its floods, as a server is between turns (and as it is in the relay
// suite while the other contestants flood). For every
// flood, the server's CPU per update, its main thread's share of it, and
// whether a major garbage collection ran in it; the rows give the median and
// the slowest quartile (the third quartile) of CPU per update, and the rate.
//
// It guards against a slow mode: a server that spends about 5 µs an update on
// most floods and 2-3 times that on some. That was a major collection in the
// flood, marking the whole heap on V8's threads, brought on by what a flood
// held in memory behind an HTTP/2 client's 64 KiB window
// (docs/performance.md, "The slow floods").
import { benchCases, type Listen } from "./bench-case.ts";
import type { BenchContext } from "./context.ts";
import { startMany, stopAll } from "./context.ts";
import { TARGETS } from "./config.ts";
import { type Contestant, interleave, serverEntrant } from "./interleave.ts";
import { floodPrompt } from "./prompt-script.ts";
import { CPU_SETTLE_MS, TURN_TIMEOUT_MS } from "./relay.ts";
import { Impl, makeRow, num, ratioTarget, spreadTarget, type Row } from "./report.ts";
import type { ServerSpec } from "./server-spec.ts";
import { summarize } from "./stats.ts";
import { Profile, withTimeout } from "./wire-client.ts";

const Key = { Ours: "ours", Raw: "raw" } as const;
type Key = (typeof Key)[keyof typeof Key];

function seriesServers(baseline: Listen, ours: Listen): Record<Key, ServerSpec> {
  return { ours: { impl: "ours", listen: ours, agent: "fast" }, raw: { impl: "raw", listen: baseline } };
}

export const SERIES_CASES = benchCases({ [Profile.H2c]: "h2c SSE", [Profile.H2]: "h2 TLS SSE" }, seriesServers);

/** One measured flood. */
interface Flood {
  rate: number;
  /** Server CPU per update, in microseconds... */
  cpu: number;
  /** ...and its main thread's part. */
  main: number;
  /** Major garbage collections during the flood. */
  majorGcs: number;
}

async function flood(contestant: Contestant, updates: number, bytes: number, what: string): Promise<Flood & { lost: number; error?: string }> {
  const server = contestant.server;
  if (server === undefined) throw new Error(`${what}: no server to measure`);
  const before = await server.cpuDetail();
  const turn = await withTimeout(contestant.prompt(floodPrompt(updates, bytes)), TURN_TIMEOUT_MS, what);
  // Work deferred past the response (the journal's write) is part of the flood.
  await new Promise((resolve) => setTimeout(resolve, CPU_SETTLE_MS));
  const after = await server.cpuDetail();
  return {
    rate: turn.updates / (turn.responseMs / 1000),
    cpu: (after.total - before.total) / updates,
    main: (after.main - before.main) / updates,
    majorGcs: after.majorGcs - before.majorGcs,
    lost: updates - turn.updates,
    ...(turn.error !== undefined ? { error: turn.error } : {}),
  };
}

/** What the floods of one contestant say beyond the median: its slowest quartile, its main thread, and the floods a major collection fell in. */
function spread(key: Key, floods: readonly Flood[]): string {
  if (floods.length === 0) return `${key}: no flood measured`;
  const cpu = summarize(floods.map((f) => f.cpu));
  const main = summarize(floods.map((f) => f.main));
  const collected = floods.filter((f) => f.majorGcs > 0);
  const others = floods.filter((f) => f.majorGcs === 0);
  const median = (list: readonly Flood[]): string => (list.length === 0 ? "-" : num(summarize(list.map((f) => f.cpu)).median));
  return (
    `${key}: CPU per update median ${num(cpu.median)} µs, slowest quartile ${num(cpu.q3)} µs (${num(cpu.q3 / cpu.median)}× the median), main thread ${num(main.median)} µs; ` +
    `a major collection in ${collected.length} of ${floods.length} floods (median ${median(collected)} µs, the others ${median(others)} µs)`
  );
}

export async function runFloodSeries(ctx: BenchContext): Promise<Row[]> {
  const { floods, updates, bytes, warmupTurns, idleMs } = ctx.config.series;
  const started = await startMany(ctx, "series", SERIES_CASES.flatMap((c) => Object.values(c.servers)));
  const rows: Row[] = [];
  try {
    for (const c of SERIES_CASES) {
      const measured: Record<Key, Flood[]> = { ours: [], raw: [] };
      const notes: string[] = [];
      await interleave({
        entrants: (Object.entries(c.servers) as Array<[Key, ServerSpec]>).map(([key, spec]) => serverEntrant(key, started, spec, c.profile)),
        runs: floods,
        name: c.name,
        notes,
        warm: async (contestant, key) => {
          for (let turn = 0; turn < warmupTurns; turn++) await withTimeout(contestant.prompt(floodPrompt(updates, bytes)), TURN_TIMEOUT_MS, `${key} ${c.name} warm-up`);
        },
        measure: async (contestant, key, run) => {
          // Half before each flood of the round's two: each server idles about idleMs between its own.
          await new Promise((resolve) => setTimeout(resolve, idleMs / 2));
          const result = await flood(contestant, updates, bytes, `${key} ${c.name} flood`);
          if (result.error !== undefined) notes.push(`${key} flood ${run + 1}: the prompt failed: ${result.error}`);
          if (result.lost !== 0) notes.push(`${key} flood ${run + 1}: ${result.lost} of ${updates} updates lost`);
          if (result.error === undefined && result.lost === 0) measured[key].push(result);
        },
      });
      const allDelivered = !notes.some((n) => n.includes("lost") || n.includes("failed"));
      const cpuNotes = [spread(Key.Ours, measured.ours), spread(Key.Raw, measured.raw)];
      const metric = (what: string): string => `${what}, ${floods} floods`;
      const cpu = makeRow({
        suite: "series",
        name: c.name,
        metric: metric("server CPU per update"),
        unit: "µs",
        higherIsBetter: false,
        results: { [Impl.Ours]: summarize(measured.ours.map((f) => f.cpu)), [Impl.Raw]: summarize(measured.raw.map((f) => f.cpu)) },
        notes: [...cpuNotes, ...notes],
        checks: { allDelivered },
      });
      cpu.targets.push(spreadTarget(cpu, TARGETS.series.slowQuartileVsMedian), ratioTarget(cpu, Impl.Raw, TARGETS.relay.cpuVsRaw, true));
      const rate = makeRow({
        suite: "series",
        name: c.name,
        metric: metric("updates/s"),
        unit: "1/s",
        higherIsBetter: true,
        results: { [Impl.Ours]: summarize(measured.ours.map((f) => f.rate)), [Impl.Raw]: summarize(measured.raw.map((f) => f.rate)) },
        checks: { allDelivered },
      });
      rate.targets.push(ratioTarget(rate, Impl.Raw, TARGETS.relay.vsRaw));
      rows.push(cpu, rate);
      ctx.log(`series ${c.name}: ${cpuNotes.join("; ")}`);
    }
  } finally {
    await stopAll(started.servers.values());
  }
  return rows;
}
