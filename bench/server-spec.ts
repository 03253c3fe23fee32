// What servers.ts asks server-child.ts to run, and the messages between them.
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentSpec } from "../protocol/agent-spec.ts";

/**
 * The stdio agent behind a relay: "sdk" the SDK-written fixture agent
 * (test/fixtures/agent.ts, what an agent built with the SDK emits), "fast"
 * the bench's fast flood agent (fast-agent.ts, which costs next to nothing per
 * update, so that the relay's own cost shows).
 */
export type BenchAgent = "sdk" | "fast";

/**
 * impl: "raw" the baseline (raw-server.ts), "sdk" the SDK's AcpServer with an
 * in-process SDK agent, "sdk-bridge" the SDK's AcpServer relaying to a stdio
 * agent process through the SDK's client (sdk-bridge.ts), "ours" `serve()`
 * with a stdio agent, "ours-v1" our listener with the /v1 route and raised
 * per-key limits.
 * listen: "h2c" cleartext HTTP/2 only, "http1" cleartext HTTP/1.1 and
 * WebSocket, "tls" HTTP/2 over TLS with HTTP/1.1 and WebSocket; "clear" is
 * our own one-port listener (h2c, HTTP/1.1 and WebSocket).
 */
export interface ServerSpec {
  impl: "raw" | "sdk" | "sdk-bridge" | "ours" | "ours-v1";
  listen: "h2c" | "http1" | "tls" | "clear";
  /** ours, ours-v1 and sdk-bridge: the stdio agent behind the server ("sdk" when absent). */
  agent?: BenchAgent;
  /** Run the stdio agent under --cpu-prof, writing this file (absolute path). */
  agentProfile?: string;
  /**
   * ours: lift the per-person session cap (DEFAULT_MAX_SESSIONS_PER_PRINCIPAL):
   * the capacity suite opens thousands of sessions as the one person of a
   * server without authentication, and measures the transport, not that cap.
   */
  liftSessionCap?: boolean;
}

export type ParentCommand = { type: "stop" } | { type: "rss" } | { type: "cpu" };
export type ChildReply =
  | { type: "ready"; url: string; agent: string }
  | { type: "rss"; rss: number }
  /**
   * `process.cpuUsage()` of the server process: user and system time so far,
   * in microseconds; `mainThread` the same of its main thread alone (the rest
   * is V8's collector and compiler threads and libuv's pool); `majorGcs` the
   * major garbage collections so far.
   */
  | { type: "cpu"; user: number; system: number; mainThread: number; majorGcs: number }
  | { type: "error"; message: string };

export const BENCH_AGENT_NAME = "bench";

const AGENT_FILES: Record<BenchAgent, { plain: string; profiled: string }> = {
  sdk: { plain: "../test/fixtures/agent.ts", profiled: "./profiled-agent.ts" },
  // The fast agent turns SIGTERM into a clean exit itself.
  fast: { plain: "./fast-agent.ts", profiled: "./fast-agent.ts" },
};

/** A bench agent, run by the same Node as the server; with `profile`, under --cpu-prof writing that file. */
export function benchAgentSpec(agent: BenchAgent = "sdk", profile?: string): AgentSpec {
  const files = AGENT_FILES[agent];
  if (profile === undefined) return { name: BENCH_AGENT_NAME, command: process.execPath, args: [fileURLToPath(new URL(files.plain, import.meta.url))] };
  return {
    name: BENCH_AGENT_NAME,
    command: process.execPath,
    args: ["--cpu-prof", `--cpu-prof-dir=${dirname(profile)}`, `--cpu-prof-name=${basename(profile)}`, fileURLToPath(new URL(files.profiled, import.meta.url))],
  };
}

/** Servers that run a stdio agent process. */
export function hasAgentProcess(spec: ServerSpec): boolean {
  return spec.impl === "ours" || spec.impl === "ours-v1" || spec.impl === "sdk-bridge";
}

export function specLabel(spec: ServerSpec): string {
  const agent = hasAgentProcess(spec) && spec.agent === "fast" ? "-fast" : "";
  return `${spec.impl}-${spec.listen}${agent}`;
}
