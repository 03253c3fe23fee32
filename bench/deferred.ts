// 4. Deferred service: submissions (POST /v1/chat/completions with
// `deferred: true`) and polls (GET /v1/chat/deferred-completion/{id}) per
// second over one h2c connection with `concurrency` requests in flight, on the
// embedded store; against a raw node:http2 server that answers 202 to both.
// Each run ends with the exactly-once check (spec: Limits 1; design: decision
// 3): every id is retrieved with 200 exactly once, and a second GET answers 404.
import http2 from "node:http2";
import type { BenchContext } from "./context.ts";
import { firstLines, startFor } from "./context.ts";
import { echoPrompt } from "./prompt-script.ts";
import { Impl, makeRow, target, type Row } from "./report.ts";
import type { ServerUnderTest } from "./servers.ts";
import { BENCH_AGENT_NAME } from "./server-spec.ts";
import { summarize } from "./stats.ts";

const SUBMIT_PATH = "/v1/chat/completions";
const POLL_PATH = "/v1/chat/deferred-completion/";
/** Pause between sweeps over the ids still pending while waiting for the jobs, in milliseconds. */
const DRAIN_PAUSE_MS = 20;

interface Answer {
  status: number;
  body: string;
}

function request(session: http2.ClientHttp2Session, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ":method": method, ":path": path };
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let text = "";
    req.setEncoding("utf8");
    req.on("response", (h) => (status = Number(h[":status"])));
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve({ status, body: text }));
    req.on("error", reject);
    if (body !== undefined) req.end(body);
  });
}

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight, until `deadline`; returns how many ran. */
async function pool(count: number, concurrency: number, deadline: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      await task(i);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

interface DeferredRun {
  submitsPerSecond: number;
  pollsPerSecond: number;
  /** Undefined for the raw baseline, which keeps nothing. */
  exactlyOnce?: { held: boolean; ids: number; detail: string };
}

async function deferredRun(ctx: BenchContext, server: ServerUnderTest, impl: Impl): Promise<DeferredRun> {
  const { submits, polls, pollMs, concurrency, drainMs } = ctx.config.deferred;
  const session = http2.connect(server.url);
  session.on("error", () => {});
  try {
    const body = JSON.stringify({ model: BENCH_AGENT_NAME, messages: [{ role: "user", content: echoPrompt("x") }], deferred: true });
    const ids: string[] = [];
    const unexpected = new Map<number, number>();
    const count = (status: number): void => void unexpected.set(status, (unexpected.get(status) ?? 0) + 1);

    let start = performance.now();
    const submitted = await pool(submits, concurrency, start + 60_000, async () => {
      const answer = await request(session, "POST", SUBMIT_PATH, body);
      if (impl === Impl.Raw) {
        if (answer.status !== 202) count(answer.status);
        return;
      }
      if (answer.status !== 200) return count(answer.status);
      ids.push((JSON.parse(answer.body) as { request_id: string }).request_id);
    });
    const submitsPerSecond = submitted / ((performance.now() - start) / 1000);

    // Polls go to the ids not retrieved yet; a 200 retrieves one.
    const retrieved = new Map<string, number>();
    const pending = impl === Impl.Raw ? Array.from({ length: submits }, (_, i) => `raw-${i}`) : [...ids];
    start = performance.now();
    let cursor = 0;
    const polled = await pool(polls, concurrency, start + pollMs, async () => {
      if (pending.length === 0) return;
      const id = pending[cursor++ % pending.length] as string;
      const answer = await request(session, "GET", `${POLL_PATH}${encodeURIComponent(id)}`);
      if (answer.status === 202) return;
      if (answer.status === 200 || answer.status >= 500) {
        retrieved.set(id, (retrieved.get(id) ?? 0) + 1);
        const at = pending.indexOf(id);
        if (at !== -1) pending.splice(at, 1);
        if (answer.status >= 500) count(answer.status);
        return;
      }
      // 404 for an id another worker retrieved a moment ago is expected; any other is not.
      if (!(answer.status === 404 && retrieved.has(id))) count(answer.status);
    });
    const pollsPerSecond = polled / ((performance.now() - start) / 1000);
    if (impl === Impl.Raw) return { submitsPerSecond, pollsPerSecond };

    // Wait for every job, retrieving each as it finishes.
    const drainDeadline = performance.now() + drainMs;
    while (pending.length > 0 && performance.now() < drainDeadline) {
      for (const id of [...pending]) {
        const answer = await request(session, "GET", `${POLL_PATH}${encodeURIComponent(id)}`);
        if (answer.status === 202) continue;
        if (answer.status === 200 || answer.status >= 500) retrieved.set(id, (retrieved.get(id) ?? 0) + 1);
        if (answer.status !== 200) count(answer.status);
        pending.splice(pending.indexOf(id), 1);
      }
      if (pending.length > 0) await new Promise((r) => setTimeout(r, DRAIN_PAUSE_MS));
    }
    let secondNot404 = 0;
    await pool(ids.length, concurrency, Number.POSITIVE_INFINITY, async (i) => {
      const answer = await request(session, "GET", `${POLL_PATH}${encodeURIComponent(ids[i] as string)}`);
      if (answer.status !== 404) secondNot404++;
    });
    const once = ids.filter((id) => retrieved.get(id) === 1).length;
    const held = ids.length === submitted && once === ids.length && secondNot404 === 0 && pending.length === 0 && unexpected.size === 0;
    const statuses = [...unexpected].map(([s, n]) => `${n}× HTTP ${s}`).join(", ");
    const detail = `${ids.length} ids, ${once} retrieved exactly once, ${pending.length} never finished, ${secondNot404} second GETs not 404${statuses ? `, unexpected: ${statuses}` : ""}`;
    return { submitsPerSecond, pollsPerSecond, exactlyOnce: { held, ids: ids.length, detail } };
  } finally {
    session.destroy();
  }
}

export async function runDeferred(ctx: BenchContext): Promise<Row[]> {
  const { runs } = ctx.config;
  const servers: Partial<Record<Impl, ServerUnderTest>> = {};
  const results: Partial<Record<Impl, DeferredRun[]>> = { raw: [], ours: [] };
  const notes: string[] = [];
  const checks: boolean[] = [];
  try {
    for (const [impl, spec] of [[Impl.Raw, { impl: "raw", listen: "h2c" }], [Impl.Ours, { impl: "ours-v1", listen: "clear" }]] as const) {
      try {
        servers[impl] = await startFor(ctx, "deferred", spec);
      } catch (error) {
        notes.push(`${impl}: the server did not start: ${firstLines(error)}`);
        if (impl === Impl.Ours) checks.push(false);
      }
    }
    for (let run = 0; run < runs; run++) {
      for (const impl of run % 2 === 0 ? [Impl.Raw, Impl.Ours] : [Impl.Ours, Impl.Raw]) {
        const server = servers[impl];
        if (server === undefined) continue;
        try {
          const r = await deferredRun(ctx, server, impl);
          results[impl]?.push(r);
          if (r.exactlyOnce !== undefined) {
            checks.push(r.exactlyOnce.held);
            if (!r.exactlyOnce.held) notes.push(`run ${run + 1}: exactly-once VIOLATED: ${r.exactlyOnce.detail}`);
            else if (run === 0) notes.push(`exactly-once held in every run (run 1: ${r.exactlyOnce.detail})`);
          }
        } catch (error) {
          notes.push(`${impl} run ${run + 1}: ${(error as Error).message}`);
          if (impl === Impl.Ours) checks.push(false);
        }
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  const pick = (f: (r: DeferredRun) => number) => ({ raw: summarize((results.raw ?? []).map(f)), ours: summarize((results.ours ?? []).map(f)) });
  const exactlyOnce = checks.length > 0 && checks.every(Boolean);
  const submitsRow = makeRow({ suite: "deferred", name: "h2c", metric: "submits/s", unit: "1/s", higherIsBetter: true, results: pick((r) => r.submitsPerSecond), notes, checks: { exactlyOnce } });
  submitsRow.target = target(">= 5,000/s", submitsRow.results.ours?.median ?? Number.NaN, 5_000, false);
  const pollsRow = makeRow({ suite: "deferred", name: "h2c", metric: "polls/s", unit: "1/s", higherIsBetter: true, results: pick((r) => r.pollsPerSecond), checks: { exactlyOnce } });
  pollsRow.target = target(">= 20,000/s", pollsRow.results.ours?.median ?? Number.NaN, 20_000, false);
  ctx.log(`deferred: ours ${submitsRow.results.ours?.median.toFixed(0)} submits/s, ${pollsRow.results.ours?.median.toFixed(0)} polls/s; exactly-once ${exactlyOnce ? "held" : "VIOLATED"}`);
  return [submitsRow, pollsRow];
}
