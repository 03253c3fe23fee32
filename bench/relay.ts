// 1. Relay throughput: one prompt turn in which the agent floods `updates`
// agent_message_chunk notifications; the client counts what reaches it on its
// session stream (SSE) or socket (WebSocket) until the turn's response, over
// h2c, h2 (TLS), HTTP/1.1 and WebSocket. Each run measures raw, SDK and ours in
// turn (rotating who goes first) so that the machine's noise falls on all three.
import type { BenchContext } from "./context.ts";
import { startMany, stopAll } from "./context.ts";
import { floodPrompt } from "./prompt-script.ts";
import { Impl, makeRow, target, type Row } from "./report.ts";
import type { ServerSpec } from "./server-spec.ts";
import { summarize } from "./stats.ts";
import { interleave } from "./interleave.ts";
import { Profile, withTimeout } from "./wire-client.ts";

/** Longest one flood turn may take before the run counts as failed, in milliseconds. */
const TURN_TIMEOUT_MS = 120_000;

interface RelayCase {
  name: string;
  profile: Profile;
  servers: Record<Impl, ServerSpec>;
}

export const RELAY_CASES: readonly RelayCase[] = [
  { name: "h2c SSE", profile: Profile.H2c, servers: { raw: { impl: "raw", listen: "h2c" }, sdk: { impl: "sdk", listen: "h2c" }, ours: { impl: "ours", listen: "clear" } } },
  { name: "h2 TLS SSE", profile: Profile.H2, servers: { raw: { impl: "raw", listen: "tls" }, sdk: { impl: "sdk", listen: "tls" }, ours: { impl: "ours", listen: "tls" } } },
  { name: "HTTP/1.1 SSE", profile: Profile.Http1, servers: { raw: { impl: "raw", listen: "http1" }, sdk: { impl: "sdk", listen: "http1" }, ours: { impl: "ours", listen: "clear" } } },
  { name: "WebSocket", profile: Profile.Ws, servers: { raw: { impl: "raw", listen: "http1" }, sdk: { impl: "sdk", listen: "http1" }, ours: { impl: "ours", listen: "clear" } } },
];

const IMPLS: readonly Impl[] = [Impl.Raw, Impl.Sdk, Impl.Ours];

export async function runRelay(ctx: BenchContext): Promise<Row[]> {
  const { runs } = ctx.config;
  const { updates, bytes, warmup } = ctx.config.relay;
  const started = await startMany(ctx, "relay", RELAY_CASES.flatMap((c) => IMPLS.map((impl) => c.servers[impl])));
  const rows: Row[] = [];
  try {
    for (const c of RELAY_CASES) {
      const rates: Record<Impl, number[]> = { raw: [], sdk: [], ours: [] };
      const mbs: Record<Impl, number[]> = { raw: [], sdk: [], ours: [] };
      const notes: string[] = [];
      await interleave({
        impls: IMPLS,
        runs,
        name: c.name,
        profile: c.profile,
        notes,
        started,
        specs: c.servers,
        warm: (client, impl) => withTimeout(client.prompt(floodPrompt(warmup, bytes)), TURN_TIMEOUT_MS, `${impl} ${c.name} warm-up`),
        measure: async (client, impl, run) => {
          const turn = await withTimeout(client.prompt(floodPrompt(updates, bytes)), TURN_TIMEOUT_MS, `${impl} ${c.name} flood`);
          if (turn.error !== undefined) notes.push(`${impl} run ${run + 1}: the prompt failed: ${turn.error}`);
          if (turn.updates !== updates) notes.push(`${impl} run ${run + 1}: ${updates - turn.updates} of ${updates} updates lost`);
          if (turn.error !== undefined || turn.updates !== updates) return;
          rates[impl].push(turn.updates / (turn.responseMs / 1000));
          mbs[impl].push(turn.bytes / 1e6 / (turn.responseMs / 1000));
        },
      });
      const results = { raw: summarize(rates.raw), sdk: summarize(rates.sdk), ours: summarize(rates.ours) };
      const allDelivered = !notes.some((n) => n.includes("lost") || n.includes("failed"));
      const row = makeRow({ suite: "relay", name: c.name, metric: "updates/s", unit: "1/s", higherIsBetter: true, results, notes, checks: { allDelivered } });
      // Targets: >= 50% of the raw transport rate and >= 2x the SDK's AcpServer.
      const both = Math.min(row.vsRaw / 0.5, row.vsSdk / 2);
      row.target = { ...target(">= 0.5× raw and >= 2× sdk", both, 1, false) };
      rows.push(row);
      rows.push(
        makeRow({
          suite: "relay",
          name: c.name,
          metric: "MB/s",
          unit: "MB/s of JSON",
          higherIsBetter: true,
          results: { raw: summarize(mbs.raw), sdk: summarize(mbs.sdk), ours: summarize(mbs.ours) },
        }),
      );
      ctx.log(`relay ${c.name}: ours ${results.ours.median.toFixed(0)}/s, raw ${results.raw.median.toFixed(0)}/s, sdk ${results.sdk.median.toFixed(0)}/s`);
    }
  } finally {
    await stopAll(started.servers.values());
  }
  return rows;
}
