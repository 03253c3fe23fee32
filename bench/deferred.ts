// 4. Deferred service: submissions (POST /v1/chat/completions with
// `deferred: true`) and polls (GET /v1/chat/deferred-completion/{id}) per
// second over one h2c connection with `concurrency` requests in flight, on the
// embedded store; against a raw node:http2 server that answers 202 to both.
// The measured requests come from h2load when it is installed (h2load.ts),
// else from this process. A batch of `submits` jobs submitted here first is
// the one whose ids are followed: polled, drained, checked.
// Each run ends with the exactly-once check (spec: Limits 1; design: decision
// 3): every id is retrieved with 200 exactly once, and a second GET answers 404.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TARGETS } from "./config.ts";
import type { BenchContext } from "./context.ts";
import { firstLines, startFor } from "./context.ts";
import { ensureH2load, h2load, h2loadAvailable } from "./h2load.ts";
import { pool } from "./pool.ts";
import { echoPrompt } from "./prompt-script.ts";
import { Impl, makeRow, valueTarget, type Row } from "./report.ts";
import type { ServerUnderTest } from "./servers.ts";
import { BENCH_AGENT_NAME } from "./server-spec.ts";
import { summarize } from "./stats.ts";

const SUBMIT_PATH = "/v1/chat/completions";
const POLL_PATH = "/v1/chat/deferred-completion/";
/** Pause between sweeps over the ids still pending while waiting for the jobs, in milliseconds. */
const DRAIN_PAUSE_MS = 20;

export interface Answer {
  status: number;
  body: string;
}

/** One request on an HTTP/2 session, its body read whole; `extra` headers go with it (a token). */
export function request(
  session: http2.ClientHttp2Session,
  method: string,
  path: string,
  body?: string,
  extra: http2.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ...extra, ":method": method, ":path": path };
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

interface DeferredRun {
  submitsPerSecond: number;
  pollsPerSecond: number;
  /** Who made the measured requests: "h2load" or "node". */
  loadGenerator: string;
  /** Undefined for the raw baseline, which keeps nothing. */
  exactlyOnce?: { held: boolean; ids: number; detail: string };
}

async function deferredRun(ctx: BenchContext, server: ServerUnderTest, impl: Impl, workDir: string): Promise<DeferredRun> {
  const { submits, polls, pollMs, concurrency, drainMs } = ctx.config.deferred;
  const useH2load = h2loadAvailable();
  const session = http2.connect(server.url);
  session.on("error", () => {});
  try {
    const body = JSON.stringify({ model: BENCH_AGENT_NAME, messages: [{ role: "user", content: echoPrompt("x") }], deferred: true });
    const ids: string[] = [];
    const unexpected = new Map<number, number>();
    const count = (status: number, n = 1): void => void unexpected.set(status, (unexpected.get(status) ?? 0) + n);
    const submitStatus = impl === Impl.Raw ? 202 : 200;

    // The batch whose ids the exactly-once check follows, submitted by this process.
    let start = performance.now();
    const submitted = await pool(submits, concurrency, start + 60_000, async () => {
      const answer = await request(session, "POST", SUBMIT_PATH, body);
      if (answer.status !== submitStatus) return count(answer.status);
      if (impl !== Impl.Raw) ids.push((JSON.parse(answer.body) as { request_id: string }).request_id);
    });
    let submitsPerSecond = submitted / ((performance.now() - start) / 1000);
    if (useH2load) {
      // The measured submissions (their ids stay unknown; their jobs run like the others).
      const bodyFile = join(workDir, "body.json");
      writeFileSync(bodyFile, body);
      const load = await h2load({
        url: `${server.url}${SUBMIT_PATH}`,
        requests: submits,
        concurrency,
        bodyFile,
        headers: { "content-type": "application/json" },
        logFile: join(workDir, "submits.log"),
        timeoutMs: 120_000,
      });
      submitsPerSecond = load.perSecond;
      for (const [status, n] of load.statuses) if (status !== submitStatus) count(status, n);
    }

    // Polls go to the batch's ids (the raw server answers 202 to any); a 200 retrieves one.
    const pollIds = impl === Impl.Raw ? Array.from({ length: submits }, (_, i) => `raw-${i}`) : [...ids];
    const retrieved = new Map<string, number>();
    /** 200s (and failed jobs' 5xx) whose id h2load does not tell. */
    let anonymousRetrievals = 0;
    let pollsPerSecond: number;
    if (useH2load) {
      const urlFile = join(workDir, "polls.txt");
      writeFileSync(urlFile, `${pollIds.map((id) => `${server.url}${POLL_PATH}${encodeURIComponent(id)}`).join("\n")}\n`);
      const load = await h2load({ urlFile, requests: polls, concurrency, logFile: join(workDir, "polls.log"), timeoutMs: 120_000 });
      pollsPerSecond = load.perSecond;
      for (const [status, n] of load.statuses) {
        if (status === 200 || status >= 500) anonymousRetrievals += n;
        if (status !== 200 && status !== 202 && status !== 404) count(status, n);
      }
    } else {
      const pending = [...pollIds];
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
      pollsPerSecond = polled / ((performance.now() - start) / 1000);
    }
    if (impl === Impl.Raw) return { submitsPerSecond, pollsPerSecond, loadGenerator: useH2load ? "h2load" : "node" };

    // Wait for every job of the batch, retrieving each as it finishes; a 404
    // here is an id a poll above retrieved already.
    const pending = ids.filter((id) => !retrieved.has(id));
    const drainDeadline = performance.now() + drainMs;
    let goneBeforeDrain = 0;
    while (pending.length > 0 && performance.now() < drainDeadline) {
      for (const id of [...pending]) {
        const answer = await request(session, "GET", `${POLL_PATH}${encodeURIComponent(id)}`);
        if (answer.status === 202) continue;
        if (answer.status === 200 || answer.status >= 500) retrieved.set(id, (retrieved.get(id) ?? 0) + 1);
        if (answer.status === 404) goneBeforeDrain++;
        else if (answer.status !== 200) count(answer.status);
        pending.splice(pending.indexOf(id), 1);
      }
      if (pending.length > 0) await new Promise((r) => setTimeout(r, DRAIN_PAUSE_MS));
    }
    let secondNot404 = 0;
    await pool(ids.length, concurrency, Number.POSITIVE_INFINITY, async (i) => {
      const answer = await request(session, "GET", `${POLL_PATH}${encodeURIComponent(ids[i] as string)}`);
      if (answer.status !== 404) secondNot404++;
    });
    // Every id gone at the end, and as many retrievals as ids, with none seen twice: each id was retrieved exactly once.
    const seenTwice = [...retrieved.values()].filter((n) => n > 1).length;
    const retrievals = [...retrieved.values()].reduce((a, b) => a + b, 0) + anonymousRetrievals;
    const held =
      ids.length === submitted && retrievals === ids.length && goneBeforeDrain === anonymousRetrievals && seenTwice === 0 && secondNot404 === 0 && pending.length === 0 && unexpected.size === 0;
    const statuses = [...unexpected].map(([s, n]) => `${n}× HTTP ${s}`).join(", ");
    const detail = `${ids.length} ids, ${retrievals} retrievals (${anonymousRetrievals} by h2load), ${seenTwice} ids retrieved twice, ${pending.length} never finished, ${secondNot404} second GETs not 404${statuses ? `, unexpected: ${statuses}` : ""}`;
    return { submitsPerSecond, pollsPerSecond, loadGenerator: useH2load ? "h2load" : "node", exactlyOnce: { held, ids: ids.length, detail } };
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
  const workDir = mkdtempSync(join(tmpdir(), "acp-remote-bench-deferred-"));
  ensureH2load(ctx.log);
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
          const r = await deferredRun(ctx, server, impl, workDir);
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
    rmSync(workDir, { recursive: true, force: true });
  }
  const generators = new Set([...(results.raw ?? []), ...(results.ours ?? [])].map((r) => r.loadGenerator));
  notes.push(`requests made by ${[...generators].join(" and ")}${generators.has("node") ? " (install nghttp2-client for h2load: the Node client caps every server at its own rate)" : ""}`);
  const pick = (f: (r: DeferredRun) => number) => ({ raw: summarize((results.raw ?? []).map(f)), ours: summarize((results.ours ?? []).map(f)) });
  const exactlyOnce = checks.length > 0 && checks.every(Boolean);
  const submitsRow = makeRow({ suite: "deferred", name: "h2c", metric: "submits/s", unit: "1/s", higherIsBetter: true, results: pick((r) => r.submitsPerSecond), notes, checks: { exactlyOnce } });
  submitsRow.targets.push(valueTarget(submitsRow, `>= ${TARGETS.deferred.submitsPerSecond.toLocaleString("en")}/s`, TARGETS.deferred.submitsPerSecond, false));
  const pollsRow = makeRow({ suite: "deferred", name: "h2c", metric: "polls/s", unit: "1/s", higherIsBetter: true, results: pick((r) => r.pollsPerSecond), checks: { exactlyOnce } });
  pollsRow.targets.push(valueTarget(pollsRow, `>= ${TARGETS.deferred.pollsPerSecond.toLocaleString("en")}/s`, TARGETS.deferred.pollsPerSecond, false));
  ctx.log(`deferred: ours ${submitsRow.results.ours?.median.toFixed(0)} submits/s, ${pollsRow.results.ours?.median.toFixed(0)} polls/s; exactly-once ${exactlyOnce ? "held" : "VIOLATED"}`);
  return [submitsRow, pollsRow];
}
