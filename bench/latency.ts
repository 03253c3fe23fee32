// 2. Round-trip latency: POST session/prompt `echo x` (or its WebSocket
// frame), the one update it makes on the stream, then its response; thousands
// of turns one after another on one connection, bounded in count and time,
// over every profile. Each run gives a p50 and a p99 per server; rows report
// the median of those over the runs. The raw rows are the same round trip
// with no protocol logic and no agent. Ours is measured with the fast agent
// (its own latency) and with the SDK-written agent (what a user sees with a
// real agent, the agent's own hop included).
import { benchCases, type Listen } from "./bench-case.ts";
import { TARGETS } from "./config.ts";
import type { BenchContext } from "./context.ts";
import { startMany, stopAll } from "./context.ts";
import { type Contestant, interleave, serverEntrant } from "./interleave.ts";
import { echoPrompt } from "./prompt-script.ts";
import { addedTarget, Impl, makeRow, valueTarget, type Row } from "./report.ts";
import type { ServerSpec } from "./server-spec.ts";
import { quantileSorted, summarize } from "./stats.ts";
import { Profile, withTimeout } from "./wire-client.ts";

/** Longest one turn may take before the run counts as failed, in milliseconds. */
const TURN_TIMEOUT_MS = 30_000;

const Key = { Raw: "raw", Sdk: "sdk", Ours: "ours", OursSdkAgent: "ours/sdk-agent" } as const;
type Key = (typeof Key)[keyof typeof Key];

function latencyServers(baseline: Listen, ours: Listen): Record<Key, ServerSpec> {
  return {
    raw: { impl: "raw", listen: baseline },
    sdk: { impl: "sdk", listen: baseline },
    ours: { impl: "ours", listen: ours, agent: "fast" },
    "ours/sdk-agent": { impl: "ours", listen: ours, agent: "sdk" },
  };
}

export const LATENCY_CASES = benchCases(
  { [Profile.H2c]: "h2c POST→SSE", [Profile.H2]: "h2 TLS POST→SSE", [Profile.Http1]: "HTTP/1.1 POST→SSE", [Profile.Ws]: "WebSocket" },
  latencyServers,
);

interface RunStats {
  p50: number;
  p99: number;
  first50: number;
  turns: number;
}

async function measure(contestant: Contestant, turns: number, maxMs: number): Promise<RunStats> {
  const rt: number[] = [];
  const first: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < turns && performance.now() < deadline; i++) {
    const turn = await withTimeout(contestant.prompt(echoPrompt("x")), TURN_TIMEOUT_MS, "echo turn");
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
  const started = await startMany(ctx, "latency", LATENCY_CASES.flatMap((c) => Object.values(c.servers)));
  const rows: Row[] = [];
  try {
    for (const c of LATENCY_CASES) {
      const stats: Record<Key, RunStats[]> = { raw: [], sdk: [], ours: [], "ours/sdk-agent": [] };
      const notes: string[] = [];
      await interleave({
        entrants: (Object.entries(c.servers) as Array<[Key, ServerSpec]>).map(([key, spec]) => serverEntrant(key, started, spec, c.profile)),
        runs,
        name: c.name,
        notes,
        warm: (contestant) => measure(contestant, warmup, maxMs),
        measure: async (contestant, key) => {
          stats[key].push(await measure(contestant, turns, maxMs));
        },
      });
      const pick = (f: (s: RunStats) => number, ours: Key = Key.Ours) => ({ raw: summarize(stats.raw.map(f)), sdk: summarize(stats.sdk.map(f)), ours: summarize(stats[ours].map(f)) });
      const turnsDone = stats.ours.map((s) => s.turns);
      if (turnsDone.length > 0) notes.push(`ours: ${turnsDone.join(", ")} turns per run`);
      const p50 = makeRow({ suite: "latency", name: c.name, metric: "round trip p50, fast agent", unit: "ms", higherIsBetter: false, results: pick((s) => s.p50), notes });
      p50.targets.push(addedTarget(p50, Impl.Raw, TARGETS.latency.addedP50Ms));
      const p99 = makeRow({ suite: "latency", name: c.name, metric: "round trip p99, fast agent", unit: "ms", higherIsBetter: false, results: pick((s) => s.p99) });
      p99.targets.push(valueTarget(p99, `<= ${TARGETS.latency.p99Ms} ms`, TARGETS.latency.p99Ms, true));
      const first = makeRow({ suite: "latency", name: c.name, metric: "first update p50, fast agent", unit: "ms", higherIsBetter: false, results: pick((s) => s.first50) });
      const realP50 = makeRow({ suite: "latency", name: c.name, metric: "round trip p50, SDK-written agent", unit: "ms", higherIsBetter: false, results: pick((s) => s.p50, Key.OursSdkAgent) });
      const realP99 = makeRow({ suite: "latency", name: c.name, metric: "round trip p99, SDK-written agent", unit: "ms", higherIsBetter: false, results: pick((s) => s.p99, Key.OursSdkAgent) });
      rows.push(p50, p99, first, realP50, realP99);
      const ms = (key: Key): string => summarize(stats[key].map((s) => s.p50)).median.toFixed(3);
      ctx.log(`latency ${c.name}: p50 ours ${ms(Key.Ours)} ms (SDK-written agent ${ms(Key.OursSdkAgent)} ms), raw ${ms(Key.Raw)} ms, sdk ${ms(Key.Sdk)} ms`);
    }
  } finally {
    await stopAll(started.servers.values());
  }
  return rows;
}
