// Requests for the cluster benchmark: an HTTP/2 client with one connection
// per base URL (cleartext, prior knowledge, the bearer token on every
// request), and measured load spread over several base URLs. The load comes
// from h2load (bench/h2load.ts) when it is installed: one h2load process per
// base URL, each with its share of the requests and of the streams in
// flight, all started together (h2load talks to one host only). Without it,
// from this process's own client, requests going round-robin over the URLs.
import http2 from "node:http2";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { MODEL } from "./cluster-setups.ts";
import { type Answer, request } from "./deferred.ts";
import { h2load, h2loadAvailable } from "./h2load.ts";
import { pool } from "./pool.ts";
import { echoPrompt } from "./prompt-script.ts";

export const SUBMIT_PATH = "/v1/chat/completions";
export const POLL_PATH = "/v1/chat/deferred-completion/";

/** A deferred submission whose prompt is `content` (the fixture agent's script; one short answer by default). */
export function submitBody(content = echoPrompt("x")): string {
  return JSON.stringify({ model: MODEL, messages: [{ role: "user", content }], deferred: true });
}

export type { Answer };

/** One HTTP/2 connection per base URL, opened on first use. */
export class H2Clients {
  readonly #token: string;
  readonly #sessions = new Map<string, http2.ClientHttp2Session>();

  constructor(token: string) {
    this.#token = token;
  }

  #session(base: string): http2.ClientHttp2Session {
    let session = this.#sessions.get(base);
    if (session === undefined || session.closed || session.destroyed) {
      session = http2.connect(base);
      session.on("error", () => {});
      session.on("close", () => {
        if (this.#sessions.get(base) === session) this.#sessions.delete(base);
      });
      this.#sessions.set(base, session);
    }
    return session;
  }

  request(base: string, method: string, path: string, body?: string): Promise<Answer> {
    return request(this.#session(base), method, path, body, { authorization: `Bearer ${this.#token}` });
  }

  close(): void {
    for (const session of this.#sessions.values()) session.destroy();
    this.#sessions.clear();
  }
}

export interface LoadSpec {
  /** Base URLs the requests are spread over. */
  targets: readonly string[];
  requests: number;
  /** Streams in flight over all targets together. */
  concurrency: number;
  token: string;
  /** POST this body to `paths[0]`; absent: GET each of `paths` in turn. */
  body?: string;
  paths: readonly string[];
  /** Where h2load's files go. */
  workDir: string;
  /** Names the files of this load. */
  name: string;
  timeoutMs: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Answers per HTTP status. */
  statuses: Map<number, number>;
  generator: "h2load" | "node";
}

/** `total` split into `parts` shares that differ by one at most, none below `min`. */
function shares(total: number, parts: number, min = 0): number[] {
  return Array.from({ length: parts }, (_, i) => Math.max(min, Math.floor(total / parts) + (i < total % parts ? 1 : 0)));
}

export async function load(spec: LoadSpec, clients: H2Clients): Promise<LoadResult> {
  return h2loadAvailable() ? loadWithH2load(spec) : loadWithNode(spec, clients);
}

async function loadWithH2load(spec: LoadSpec): Promise<LoadResult> {
  const requests = shares(spec.requests, spec.targets.length);
  const streams = shares(spec.concurrency, spec.targets.length, 1);
  const headers: Record<string, string> = { authorization: `Bearer ${spec.token}` };
  let bodyFile: string | undefined;
  if (spec.body !== undefined) {
    bodyFile = join(spec.workDir, `${spec.name}.body.json`);
    writeFileSync(bodyFile, spec.body);
    headers["content-type"] = "application/json";
  }
  const runs = await Promise.all(
    spec.targets.map((target, i) => {
      const logFile = join(spec.workDir, `${spec.name}.${i}.log`);
      const common = { requests: requests[i] as number, concurrency: streams[i] as number, headers, logFile, timeoutMs: spec.timeoutMs };
      if (bodyFile !== undefined) return h2load({ ...common, url: `${target}${spec.paths[0]}`, bodyFile });
      const urlFile = join(spec.workDir, `${spec.name}.${i}.urls`);
      writeFileSync(urlFile, `${spec.paths.map((p) => `${target}${p}`).join("\n")}\n`);
      return h2load({ ...common, urlFile });
    }),
  );
  const statuses = new Map<number, number>();
  for (const run of runs) for (const [status, n] of run.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  const total = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = Math.max(...runs.map((r) => r.seconds));
  return { requests: total, seconds, perSecond: total / seconds, statuses, generator: "h2load" };
}

async function loadWithNode(spec: LoadSpec, clients: H2Clients): Promise<LoadResult> {
  const statuses = new Map<number, number>();
  const start = performance.now();
  const done = await pool(spec.requests, spec.concurrency, start + spec.timeoutMs, async (i) => {
    const target = spec.targets[i % spec.targets.length] as string;
    const path = spec.body !== undefined ? (spec.paths[0] as string) : (spec.paths[i % spec.paths.length] as string);
    const answer = await clients.request(target, spec.body !== undefined ? "POST" : "GET", path, spec.body);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  });
  const seconds = (performance.now() - start) / 1000;
  return { requests: done, seconds, perSecond: done / seconds, statuses, generator: "node" };
}
