// What servers.ts asks server-child.ts to run, and the messages between them.
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentSpec } from "../protocol/agent-spec.ts";

/**
 * impl: "raw" the baseline (raw-server.ts), "sdk" the SDK's AcpServer with an
 * in-process SDK agent, "ours" `serve()` with the fixture agent, "ours-v1" our
 * listener with the /v1 route and raised per-key limits.
 * listen: "h2c" cleartext HTTP/2 only, "http1" cleartext HTTP/1.1 and
 * WebSocket, "tls" HTTP/2 over TLS with HTTP/1.1 and WebSocket; "clear" is
 * our own one-port listener (h2c, HTTP/1.1 and WebSocket).
 */
export interface ServerSpec {
  impl: "raw" | "sdk" | "ours" | "ours-v1";
  listen: "h2c" | "http1" | "tls" | "clear";
  /** Ours: run the fixture agent under --cpu-prof, writing this file (absolute path). */
  agentProfile?: string;
}

export type ParentCommand = { type: "stop" } | { type: "rss" };
export type ChildReply = { type: "ready"; url: string; agent: string } | { type: "rss"; rss: number } | { type: "error"; message: string };

export const BENCH_AGENT_NAME = "bench";

/** The fixture agent, run by the same Node as the server; with `profile`, under --cpu-prof writing that file. */
export function fixtureAgentSpec(profile?: string): AgentSpec {
  if (profile === undefined) return { name: BENCH_AGENT_NAME, command: process.execPath, args: [fileURLToPath(new URL("../test/fixtures/agent.ts", import.meta.url))] };
  return {
    name: BENCH_AGENT_NAME,
    command: process.execPath,
    args: ["--cpu-prof", `--cpu-prof-dir=${dirname(profile)}`, `--cpu-prof-name=${basename(profile)}`, fileURLToPath(new URL("./profiled-agent.ts", import.meta.url))],
  };
}

export function specLabel(spec: ServerSpec): string {
  return `${spec.impl}-${spec.listen}`;
}
