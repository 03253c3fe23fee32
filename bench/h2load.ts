// h2load (nghttp2's HTTP/2 load generator, `apt install nghttp2-client`) as the
// request source of the deferred benchmark when it is installed: a Node
// HTTP/2 client on the same 2 cores spends as much CPU per request as a fast
// server does, and caps every server at its own rate. Without h2load the
// benchmark falls back to the Node client and says so in the report.
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Requests per HTTP status, from h2load's per-request log. */
  statuses: Map<number, number>;
}

let available: boolean | undefined;

/** `BENCH_NO_H2LOAD=1` makes the bench use its Node client even where h2load is installed. */
export function h2loadAvailable(): boolean {
  if (process.env["BENCH_NO_H2LOAD"] === "1") return false;
  if (available === undefined) {
    try {
      execFileSync("h2load", ["--version"], { stdio: "ignore" });
      available = true;
    } catch {
      available = false;
    }
  }
  return available;
}

export interface LoadOptions {
  /** One URL, or a file of URLs (h2load `-i`, used in turn). */
  url?: string;
  urlFile?: string;
  requests: number;
  /** Streams in flight on the one connection. */
  concurrency: number;
  /** A file whose content is POSTed with each request. */
  bodyFile?: string;
  headers?: Record<string, string>;
  /** Where h2load writes one line per request (start, status, duration). */
  logFile: string;
  timeoutMs: number;
}

export async function h2load(options: LoadOptions): Promise<LoadResult> {
  // h2load appends to its log; each run counts only its own requests.
  rmSync(options.logFile, { force: true });
  const args = ["-n", String(options.requests), "-c", "1", "-m", String(options.concurrency), `--log-file=${options.logFile}`];
  if (options.bodyFile !== undefined) args.push("-d", options.bodyFile);
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push("-H", `${name}: ${value}`);
  if (options.urlFile !== undefined) args.push("-i", options.urlFile);
  else if (options.url !== undefined) args.push(options.url);
  const out = await new Promise<string>((resolve, reject) => {
    execFile("h2load", args, { timeout: options.timeoutMs, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
  const finished = /finished in ([\d.]+)(m?s)/.exec(out);
  if (finished === null) throw new Error(`h2load printed no result: ${out.slice(0, 500)}`);
  const seconds = Number(finished[1]) / (finished[2] === "ms" ? 1000 : 1);
  const statuses = new Map<number, number>();
  let requests = 0;
  for (const line of readFileSync(options.logFile, "utf8").split("\n")) {
    const status = Number(line.split("\t")[1]);
    if (!Number.isFinite(status) || line.length === 0) continue;
    requests++;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  return { requests, seconds, perSecond: requests / seconds, statuses };
}
