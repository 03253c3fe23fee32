// 2. Round-trip latency: POST session/prompt `echo x` (or its WebSocket
// frame), the one update it makes on the stream, then its response; thousands
// of turns one after another on one connection, bounded in count and time.
// Each run gives a p50 and a p99 per server; rows report the median of those
// over the runs. The raw rows are the same round trip with no protocol logic.
import type { BenchContext } from "./context.ts";
import { startMany, stopAll } from "./context.ts";
import { echoPrompt } from "./prompt-script.ts";
import { Impl, makeRow, target, type Row } from "./report.ts";
import type { ServerSpec } from "./server-spec.ts";
import { quantileSorted, summarize } from "./stats.ts";
import { interleave } from "./interleave.ts";
import { Profile, WireClient, withTimeout } from "./wire-client.ts";

/** Longest one turn may take before the run counts as failed, in milliseconds. */
const TURN_TIMEOUT_MS = 30_000;

interface LatencyCase {
  name: string;
  profile: Profile;
  servers: Record<Impl, ServerSpec>;
}

export const LATENCY_CASES: readonly LatencyCase[] = [
  { name: "h2c POST→SSE", profile: Profile.H2c, servers: { raw: { impl: "raw", listen: "h2c" }, sdk: { impl: "sdk", listen: "h2c" }, ours: { impl: "ours", listen: "clear" } } },
  { name: "WebSocket", profile: Profile.Ws, servers: { raw: { impl: "raw", listen: "http1" }, sdk: { impl: "sdk", listen: "http1" }, ours: { impl: "ours", listen: "clear" } } },
];

const IMPLS: readonly Impl[] = [Impl.Raw, Impl.Sdk, Impl.Ours];

interface RunStats {
  p50: number;
  p99: number;
  first50: number;
  turns: number;
}

async function measure(client: WireClient, turns: number, maxMs: number): Promise<RunStats> {
  const rt: number[] = [];
  const first: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < turns && performance.now() < deadline; i++) {
    const turn = await withTimeout(client.prompt(echoPrompt("x")), TURN_TIMEOUT_MS, "echo turn");
    if (turn.error !== undefined) throw new Error(`the prompt failed: ${turn.error}`);
    if (turn.updates !== 1) throw new Error(`the echo turn delivered ${turn.updates} updates, not 1`);
    rt.push(turn.responseMs);
    first.push(turn.firstUpdateMs);
  }
  rt.sort((a, b) => a - b);
  first.sort((a, b) => a - b);
  return { p50: quantileSorted(rt, 0.5), p99: quantileSorted(rt, 0.99), first50: quantileSorted(first, 0.5), turns: rt.length };
}

export async function runLatency(ctx: BenchContext): Promise<Row[]> {
  const { runs } = ctx.config;
  const { turns, maxMs, warmup } = ctx.config.latency;
  const started = await startMany(ctx, "latency", LATENCY_CASES.flatMap((c) => IMPLS.map((impl) => c.servers[impl])));
  const rows: Row[] = [];
  try {
    for (const c of LATENCY_CASES) {
      const stats: Record<Impl, RunStats[]> = { raw: [], sdk: [], ours: [] };
      const notes: string[] = [];
      await interleave({
        impls: IMPLS,
        runs,
        name: c.name,
        profile: c.profile,
        notes,
        started,
        specs: c.servers,
        warm: (client) => measure(client, warmup, maxMs),
        measure: async (client, impl) => {
          stats[impl].push(await measure(client, turns, maxMs));
        },
      });
      const pick = (f: (s: RunStats) => number) => ({ raw: summarize(stats.raw.map(f)), sdk: summarize(stats.sdk.map(f)), ours: summarize(stats.ours.map(f)) });
      const turnsDone = stats.ours.map((s) => s.turns);
      if (turnsDone.length > 0) notes.push(`ours: ${turnsDone.join(", ")} turns per run`);
      const p50 = makeRow({ suite: "latency", name: c.name, metric: "round trip p50", unit: "ms", higherIsBetter: false, results: pick((s) => s.p50), notes });
      p50.target = target("<= 1.5× raw", p50.vsRaw, 1.5, true);
      const p99 = makeRow({ suite: "latency", name: c.name, metric: "round trip p99", unit: "ms", higherIsBetter: false, results: pick((s) => s.p99) });
      p99.target = target("<= 3 ms", p99.results.ours?.median ?? Number.NaN, 3, true);
      const first = makeRow({ suite: "latency", name: c.name, metric: "first update p50", unit: "ms", higherIsBetter: false, results: pick((s) => s.first50) });
      rows.push(p50, p99, first);
      ctx.log(`latency ${c.name}: ours p50 ${p50.results.ours?.median.toFixed(3)} ms, raw ${p50.results.raw?.median.toFixed(3)} ms, sdk ${p50.results.sdk?.median.toFixed(3)} ms`);
    }
  } finally {
    await stopAll(started.servers.values());
  }
  return rows;
}
