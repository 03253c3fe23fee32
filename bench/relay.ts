// 1. Relay throughput: one prompt turn in which the agent floods `updates`
// agent_message_chunk notifications; the client counts what reaches it on its
// session stream (SSE) or socket (WebSocket) until the turn's response, over
// h2c, h2 (TLS), HTTP/1.1 and WebSocket.
//
// Two agents stand behind the relays. The fast agent (fast-agent.ts) costs
// next to nothing per update, so that ours and the SDK's bridge show their own
// cost: beside raw Node and the SDK's AcpServer with its in-process agent,
// with each server's CPU per update from process accounting. The SDK-written
// agent (test/fixtures/agent.ts) is what a real agent built with the SDK
// emits: beside it, the same agent read by a bare line reader, the most any
// relay of it can deliver.
//
// Each run measures every contestant of a case in turn (rotating who goes
// first) so that the machine's noise falls on all of them.
import { DEFAULT_JOURNAL_FLUSH_MS } from "../sidecar/limits.ts";
import { benchCases, type BenchCase, type Listen } from "./bench-case.ts";
import { TARGETS } from "./config.ts";
import type { BenchContext } from "./context.ts";
import { startMany, stopAll } from "./context.ts";
import { bareEntrant, type Contestant, type Entrant, interleave, serverEntrant } from "./interleave.ts";
import { floodPrompt } from "./prompt-script.ts";
import { Impl, makeRow, ratioTarget, type Row } from "./report.ts";
import { benchAgentSpec, type ServerSpec } from "./server-spec.ts";
import { summarize } from "./stats.ts";
import { Profile, withTimeout } from "./wire-client.ts";

/** Longest one flood turn may take before the run counts as failed, in milliseconds. */
export const TURN_TIMEOUT_MS = 120_000;
/**
 * After a turn's response, how long a server's CPU time keeps counting, in
 * milliseconds: work a server defers past the response (our journal's batched
 * write) is part of what the turn cost it.
 */
export const CPU_SETTLE_MS = 2 * DEFAULT_JOURNAL_FLUSH_MS;

/** The contestants of a case: the fast agent's and the SDK-written agent's. */
const Key = { Raw: "raw", Sdk: "sdk", Bridge: "bridge", Ours: "ours", BridgeSdkAgent: "bridge/sdk-agent", OursSdkAgent: "ours/sdk-agent", Bare: "agent alone" } as const;
type Key = (typeof Key)[keyof typeof Key];

interface RelayCase extends BenchCase<Exclude<Key, "agent alone">> {
  /** HTTP/2: held to the SDK's server and bridge as well as to raw Node. */
  http2: boolean;
}

function relayServers(baseline: Listen, ours: Listen): Record<Exclude<Key, "agent alone">, ServerSpec> {
  return {
    raw: { impl: "raw", listen: baseline },
    sdk: { impl: "sdk", listen: baseline },
    bridge: { impl: "sdk-bridge", listen: baseline, agent: "fast" },
    ours: { impl: "ours", listen: ours, agent: "fast" },
    "bridge/sdk-agent": { impl: "sdk-bridge", listen: baseline, agent: "sdk" },
    "ours/sdk-agent": { impl: "ours", listen: ours, agent: "sdk" },
  };
}

export const RELAY_CASES: readonly RelayCase[] = benchCases(
  { [Profile.H2c]: "h2c SSE", [Profile.H2]: "h2 TLS SSE", [Profile.Http1]: "HTTP/1.1 SSE", [Profile.Ws]: "WebSocket" },
  relayServers,
).map((c) => ({ ...c, http2: c.profile === Profile.H2c || c.profile === Profile.H2 }));

interface Measured {
  rates: number[];
  /** Server CPU per update, in microseconds. */
  cpu: number[];
}

/** One flood turn; the server's CPU time is read before it and after it settled. */
async function floodTurn(contestant: Contestant, updates: number, bytes: number, what: string): Promise<{ rate: number; cpuPerUpdate: number; lost: number; error?: string }> {
  const server = contestant.server;
  const before = server === undefined ? 0 : await server.cpuMicros();
  const turn = await withTimeout(contestant.prompt(floodPrompt(updates, bytes)), TURN_TIMEOUT_MS, what);
  let cpuPerUpdate = Number.NaN;
  if (server !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, CPU_SETTLE_MS));
    cpuPerUpdate = ((await server.cpuMicros()) - before) / updates;
  }
  return { rate: turn.updates / (turn.responseMs / 1000), cpuPerUpdate, lost: updates - turn.updates, ...(turn.error !== undefined ? { error: turn.error } : {}) };
}

export async function runRelay(ctx: BenchContext): Promise<Row[]> {
  const { runs } = ctx.config;
  const { updates, bytes, warmup, warmupTurns } = ctx.config.relay;
  const started = await startMany(ctx, "relay", RELAY_CASES.flatMap((c) => Object.values(c.servers)));
  const rows: Row[] = [];
  try {
    for (const c of RELAY_CASES) {
      const measured = Object.fromEntries(Object.values(Key).map((k) => [k, { rates: [], cpu: [] }])) as unknown as Record<Key, Measured>;
      const notes: string[] = [];
      const entrants: Array<Entrant<Key>> = [
        ...(Object.entries(c.servers) as Array<[Exclude<Key, "agent alone">, ServerSpec]>).map(([key, spec]) => serverEntrant(key, started, spec, c.profile)),
        bareEntrant(Key.Bare, benchAgentSpec("sdk")),
      ];
      await interleave({
        entrants,
        runs,
        name: c.name,
        notes,
        warm: async (contestant, key) => {
          for (let turn = 0; turn < warmupTurns; turn++) await withTimeout(contestant.prompt(floodPrompt(warmup, bytes)), TURN_TIMEOUT_MS, `${key} ${c.name} warm-up`);
        },
        measure: async (contestant, key, run) => {
          const turn = await floodTurn(contestant, updates, bytes, `${key} ${c.name} flood`);
          if (turn.error !== undefined) notes.push(`${key} run ${run + 1}: the prompt failed: ${turn.error}`);
          if (turn.lost !== 0) notes.push(`${key} run ${run + 1}: ${turn.lost} of ${updates} updates lost`);
          if (turn.error !== undefined || turn.lost !== 0) return;
          measured[key].rates.push(turn.rate);
          measured[key].cpu.push(turn.cpuPerUpdate);
        },
      });
      const allDelivered = !notes.some((n) => n.includes("lost") || n.includes("failed"));
      const pick = (f: (m: Measured) => number[], keys: Partial<Record<Impl, Key>>) =>
        Object.fromEntries(Object.entries(keys).map(([impl, key]) => [impl, summarize(f(measured[key as Key]))])) as Partial<Record<Impl, ReturnType<typeof summarize>>>;
      const fast = { ours: Key.Ours, raw: Key.Raw, sdk: Key.Sdk, bridge: Key.Bridge };
      const sdkAgent = { ours: Key.OursSdkAgent, bridge: Key.BridgeSdkAgent, bare: Key.Bare };

      const rate = makeRow({ suite: "relay", name: c.name, metric: "updates/s, fast agent", unit: "1/s", higherIsBetter: true, results: pick((m) => m.rates, fast), notes, checks: { allDelivered } });
      rate.targets.push(ratioTarget(rate, Impl.Raw, TARGETS.relay.vsRaw));
      if (c.http2) rate.targets.push(ratioTarget(rate, Impl.Sdk, TARGETS.relay.vsSdk), ratioTarget(rate, Impl.Bridge, TARGETS.relay.vsBridge));
      const cpu = makeRow({ suite: "relay", name: c.name, metric: "server CPU per update, fast agent", unit: "µs", higherIsBetter: false, results: pick((m) => m.cpu, fast) });
      cpu.targets.push(ratioTarget(cpu, Impl.Raw, TARGETS.relay.cpuVsRaw, true));
      const real = makeRow({ suite: "relay", name: c.name, metric: "updates/s, SDK-written agent", unit: "1/s", higherIsBetter: true, results: pick((m) => m.rates, sdkAgent), checks: { allDelivered } });
      real.targets.push(ratioTarget(real, Impl.Bare, TARGETS.relay.vsBareAgent));
      const realCpu = makeRow({ suite: "relay", name: c.name, metric: "server CPU per update, SDK-written agent", unit: "µs", higherIsBetter: false, results: pick((m) => m.cpu, { ours: Key.OursSdkAgent, bridge: Key.BridgeSdkAgent }) });
      rows.push(rate, cpu, real, realCpu);
      const median = (key: Key): string => summarize(measured[key].rates).median.toFixed(0);
      ctx.log(`relay ${c.name}: ours ${median(Key.Ours)}/s, raw ${median(Key.Raw)}/s, sdk ${median(Key.Sdk)}/s, bridge ${median(Key.Bridge)}/s; SDK-written agent: ours ${median(Key.OursSdkAgent)}/s, alone ${median(Key.Bare)}/s`);
    }
  } finally {
    await stopAll(started.servers.values());
  }
  return rows;
}
