// 3. Capacity: N connections at once, each with its connection stream and one
// session with its session stream open (WebSocket: the socket and one
// session), opened `concurrency` at a time. Measured: how many were reached,
// the time to open them, and the server's RSS per connection (RSS after a GC
// with all of them open, minus its RSS before, over N). Every run starts a
// fresh server process so that its RSS is its own and starts from the same
// place; the agent process behind our server is reported apart.
import { TARGETS } from "./config.ts";
import type { BenchContext } from "./context.ts";
import { firstLines, startFor } from "./context.ts";
import { Impl, makeRow, target, type Row } from "./report.ts";
import type { ServerSpec } from "./server-spec.ts";
import { summarize } from "./stats.ts";
import { Profile, WireClient, withTimeout } from "./wire-client.ts";

/** Longest one connection may take to open, in milliseconds. */
const OPEN_TIMEOUT_MS = 60_000;

interface CapacityCase {
  name: string;
  profile: Profile;
  servers: Record<CapacityImpl, ServerSpec>;
}

export const CAPACITY_CASES: readonly CapacityCase[] = [
  { name: "h2c streams", profile: Profile.H2c, servers: { raw: { impl: "raw", listen: "h2c" }, sdk: { impl: "sdk", listen: "h2c" }, ours: { impl: "ours", listen: "clear", liftSessionCap: true } } },
  { name: "WebSocket", profile: Profile.Ws, servers: { raw: { impl: "raw", listen: "http1" }, sdk: { impl: "sdk", listen: "http1" }, ours: { impl: "ours", listen: "clear", liftSessionCap: true } } },
];

const IMPLS = [Impl.Raw, Impl.Sdk, Impl.Ours] as const;
type CapacityImpl = (typeof IMPLS)[number];

interface CapacityRun {
  reached: number;
  openSeconds: number;
  rssPerConnection: number;
  rssTotal: number;
  agentRss: number;
  firstError?: string;
}

async function capacityRun(ctx: BenchContext, spec: ServerSpec, profile: Profile): Promise<CapacityRun> {
  const { connections, concurrency, maxMs } = ctx.config.capacity;
  const server = await startFor(ctx, "capacity", spec);
  const clients: WireClient[] = [];
  try {
    // One connection first, so that the agent process is up and counted in the baseline.
    const first = new WireClient({ url: server.url, profile });
    await withTimeout(first.open(), OPEN_TIMEOUT_MS, "first connection");
    clients.push(first);
    const before = await server.rss();
    const start = performance.now();
    const deadline = start + maxMs;
    let next = 1;
    let failed = 0;
    let firstError: string | undefined;
    const worker = async (): Promise<void> => {
      while (next < connections && performance.now() < deadline && failed < concurrency) {
        next++;
        const client = new WireClient({ url: server.url, profile });
        try {
          await withTimeout(client.open(), OPEN_TIMEOUT_MS, "open");
          clients.push(client);
        } catch (error) {
          failed++;
          firstError ??= (error as Error).message;
          client.destroy();
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const openSeconds = (performance.now() - start) / 1000;
    const after = await server.rss();
    const run: CapacityRun = {
      reached: clients.length,
      openSeconds,
      rssPerConnection: (after - before) / Math.max(1, clients.length - 1),
      rssTotal: after,
      agentRss: server.childrenRss(),
    };
    if (firstError !== undefined) run.firstError = firstError;
    return run;
  } finally {
    for (const c of clients) c.destroy();
    await server.stop();
  }
}

export async function runCapacity(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const { runs, connections } = ctx.config.capacity;
  for (const c of CAPACITY_CASES) {
    const results: Record<CapacityImpl, CapacityRun[]> = { raw: [], sdk: [], ours: [] };
    const notes: string[] = [];
    for (let run = 0; run < runs; run++) {
      for (let k = 0; k < IMPLS.length; k++) {
        const impl = IMPLS[(run + k) % IMPLS.length] as CapacityImpl;
        try {
          const r = await capacityRun(ctx, c.servers[impl], c.profile);
          results[impl].push(r);
          if (r.reached < connections) notes.push(`${impl} run ${run + 1}: reached ${r.reached} of ${connections}${r.firstError ? ` (${r.firstError})` : ""}`);
        } catch (error) {
          notes.push(`${impl} run ${run + 1}: ${firstLines(error)}`);
        }
      }
    }
    const pick = (f: (r: CapacityRun) => number) => ({ raw: summarize(results.raw.map(f)), sdk: summarize(results.sdk.map(f)), ours: summarize(results.ours.map(f)) });
    const agent = results.ours.map((r) => r.agentRss / 2 ** 20);
    if (agent.length > 0) notes.push(`ours: agent process RSS ${summarize(agent).median.toFixed(0)} MiB (not counted above)`);
    const reached = makeRow({ suite: "capacity", name: c.name, metric: "connections open", unit: "count", higherIsBetter: true, results: pick((r) => r.reached), notes });
    const perConn = makeRow({ suite: "capacity", name: c.name, metric: "RSS per connection", unit: "KiB", higherIsBetter: false, results: pick((r) => r.rssPerConnection / 1024) });
    const total = makeRow({ suite: "capacity", name: c.name, metric: "server RSS", unit: "MiB", higherIsBetter: false, results: pick((r) => r.rssTotal / 2 ** 20) });
    const ours = perConn.results.ours;
    if (ours !== undefined) {
      // 10,000 connections with open streams under 1 GiB: RSS at 10,000 extrapolated from the per-connection figure.
      const { connections: targetConnections, rssBytes } = TARGETS.capacity;
      const atTarget = (ours.median * 1024 * targetConnections + (total.results.ours?.median ?? 0) * 2 ** 20 - ours.median * 1024 * (reached.results.ours?.median ?? 0)) / 2 ** 20;
      perConn.targets.push(target(`${targetConnections / 1000}k conns < ${rssBytes / 2 ** 30} GiB`, atTarget, rssBytes / 2 ** 20, true));
    }
    const open = makeRow({ suite: "capacity", name: c.name, metric: "time to open all", unit: "s", higherIsBetter: false, results: pick((r) => r.openSeconds) });
    rows.push(reached, perConn, total, open);
    ctx.log(`capacity ${c.name}: ours ${reached.results.ours?.median} connections, ${perConn.results.ours?.median.toFixed(1)} KiB each`);
  }
  return rows;
}
