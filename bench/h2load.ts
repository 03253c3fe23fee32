// h2load (nghttp2's HTTP/2 load generator, Debian's `nghttp2-client`) as the
// request source of the deferred benchmark: a Node HTTP/2 client on the same
// 2 cores spends as much CPU per request as a fast server does, and caps
// every server at its own rate. When it is missing, the bench installs it
// with apt-get (as root, or through `sudo -n`); when it cannot, it says why
// and falls back to the Node client, and the report says so.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Requests per HTTP status, from h2load's per-request log. */
  statuses: Map<number, number>;
}

/** The Debian package that has h2load. */
const H2LOAD_PACKAGE = "nghttp2-client";
/** Longest an apt-get step may take, in milliseconds. */
const APT_TIMEOUT_MS = 5 * 60_000;

let available: boolean | undefined;

function found(): boolean {
  try {
    execFileSync("h2load", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** `BENCH_NO_H2LOAD=1` makes the bench use its Node client even where h2load is installed. */
export function h2loadAvailable(): boolean {
  if (process.env["BENCH_NO_H2LOAD"] === "1") return false;
  available ??= found();
  return available;
}

/** How this process may run apt-get: itself as root, through sudo without a password, or not at all (and why). */
function aptRunner(): { prefix: string[] } | { why: string } {
  if (spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status !== 0) return { why: "apt-get is not available here" };
  if (process.getuid?.() === 0) return { prefix: [] };
  if (spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0) return { prefix: ["sudo", "-n"] };
  return { why: "installing needs root, and sudo asks for a password" };
}

/**
 * Installs h2load when it is missing (apt-get, as root or with `sudo -n`);
 * true when it is there now. When it cannot be installed, `log` says why and
 * how to install it by hand. `BENCH_NO_H2LOAD=1` turns all of it off.
 */
export function ensureH2load(log: (line: string) => void): boolean {
  if (process.env["BENCH_NO_H2LOAD"] === "1" || h2loadAvailable()) return h2loadAvailable();
  const manual = `install it with \`apt-get install ${H2LOAD_PACKAGE}\` for deferred figures from a client that is not the bottleneck`;
  const runner = aptRunner();
  if ("why" in runner) {
    log(`h2load is missing and was not installed (${runner.why}): the deferred benchmark uses its Node client; ${manual}`);
    return false;
  }
  const apt = (...args: string[]): boolean => {
    const [command, ...rest] = [...runner.prefix, "apt-get", ...args];
    const result = spawnSync(command as string, rest, { stdio: ["ignore", "ignore", "pipe"], timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    return result.status === 0;
  };
  log(`h2load is missing: installing ${H2LOAD_PACKAGE} with ${[...runner.prefix, "apt-get"].join(" ")}`);
  // The package lists may be empty or stale (a fresh container): refresh them once if the first try fails.
  const installed = apt("install", "-y", "--no-install-recommends", H2LOAD_PACKAGE) || (apt("update") && apt("install", "-y", "--no-install-recommends", H2LOAD_PACKAGE));
  available = installed && found();
  if (!available) log(`installing ${H2LOAD_PACKAGE} failed: the deferred benchmark uses its Node client; ${manual}`);
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
