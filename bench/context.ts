// What every suite gets from run.ts.
import type { BenchConfig } from "./config.ts";
import { join } from "node:path";
import { startServer, type ServerUnderTest } from "./servers.ts";
import type { ServerSpec } from "./server-spec.ts";
import { hasAgentProcess, specLabel } from "./server-spec.ts";

export interface BenchContext {
  config: BenchConfig;
  /** `--profile`: folder of the CPU profiles of our server (and the SDK's). */
  profileDir?: string;
  log(line: string): void;
}

/** Starts a server for a suite; with `--profile`, ours and the SDK's (and their agent processes) run under --cpu-prof. */
export function startFor(ctx: BenchContext, suite: string, spec: ServerSpec): Promise<ServerUnderTest> {
  if (ctx.profileDir === undefined || spec.impl === "raw") return startServer(spec);
  const name = `${suite}-${specLabel(spec)}`;
  // A relay relays what its agent process writes: profile both.
  const withAgent: ServerSpec = hasAgentProcess(spec) ? { ...spec, agentProfile: join(ctx.profileDir, `${name}-agent.cpuprofile`) } : spec;
  return startServer(withAgent, { profileDir: ctx.profileDir, profileName: name });
}

/** Stops servers, ignoring those that are gone already. */
export async function stopAll(servers: Iterable<ServerUnderTest>): Promise<void> {
  await Promise.all([...servers].map((s) => s.stop().catch(() => {})));
}

/** Starts every distinct server of a suite; one that fails is reported by label, and the others still run. */
export async function startMany(ctx: BenchContext, suite: string, specs: Iterable<ServerSpec>): Promise<{ servers: Map<string, ServerUnderTest>; failures: Map<string, string> }> {
  const servers = new Map<string, ServerUnderTest>();
  const failures = new Map<string, string>();
  for (const spec of specs) {
    const label = specLabel(spec);
    if (servers.has(label) || failures.has(label)) continue;
    try {
      servers.set(label, await startFor(ctx, suite, spec));
    } catch (error) {
      const message = firstLines(error);
      failures.set(label, message);
      ctx.log(`${label} did not start: ${message}`);
    }
  }
  return { servers, failures };
}

/** The gist of an error, for a note in the report. */
export function firstLines(error: unknown, lines = 4): string {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return text.split("\n").slice(0, lines).join(" | ");
}
