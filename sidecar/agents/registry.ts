// The ACP Registry as the sidecar uses it: the agent list loaded with the
// sidecar's limits (refreshed into the data folder's cache when the network
// allows), `--agent claude` and `--agent name=registry:ID` turned into the
// AgentSpec that runs the pinned version, and the text of `acp-remote agents`.
import { join } from "node:path";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import {
  describeAge,
  findRegistryAgent,
  registryAgentSpec,
  registryCommandLine,
} from "../../common/agent-registry.ts";
import {
  AGENT_REGISTRY_CACHE_FILE,
  loadAgentRegistry,
  loadAgentRegistryOffline,
  type LoadedAgentRegistry,
} from "../../common/agent-registry-source.ts";
import { DEFAULT_REGISTRY_FETCH_TIMEOUT_MS, DEFAULT_REGISTRY_MAX_BYTES, DEFAULT_REGISTRY_REFRESH_AFTER_MS } from "../limits.ts";

export type { LoadedAgentRegistry } from "../../common/agent-registry-source.ts";

/** The environment variable that moves the registry's URL; empty turns refreshing off. */
export const REGISTRY_URL_ENV = "ACP_REMOTE_REGISTRY_URL";

export function agentRegistryCacheFile(dataDir: string): string {
  return join(dataDir, AGENT_REGISTRY_CACHE_FILE);
}

export interface RegistryLoadOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  /** Ask the registry even when the cache is fresh. */
  force?: boolean;
  /** Overrides DEFAULT_REGISTRY_FETCH_TIMEOUT_MS, in milliseconds. */
  timeoutMs?: number;
}

/** The agent list, refreshed when the cache is older than DEFAULT_REGISTRY_REFRESH_AFTER_MS; never throws for want of a network. */
export function loadSidecarRegistry(options: RegistryLoadOptions): Promise<LoadedAgentRegistry> {
  const url = (options.env ?? process.env)[REGISTRY_URL_ENV];
  return loadAgentRegistry({
    cacheFile: agentRegistryCacheFile(options.dataDir),
    ...(url === undefined ? {} : { url }),
    timeoutMs: options.timeoutMs ?? DEFAULT_REGISTRY_FETCH_TIMEOUT_MS,
    maxBytes: DEFAULT_REGISTRY_MAX_BYTES,
    refreshAfterMs: options.force ? 0 : DEFAULT_REGISTRY_REFRESH_AFTER_MS,
  });
}

/** Without the network: the cache, else the shipped snapshot. */
export function loadSidecarRegistryOffline(dataDir: string): LoadedAgentRegistry {
  return loadAgentRegistryOffline(agentRegistryCacheFile(dataDir));
}

/** Where a list came from and how old it is: `the snapshot shipped with acp-remote (2026-02-07, 12 days old)`. */
export function describeRegistrySource(loaded: LoadedAgentRegistry, now = Date.now()): string {
  const when = `${loaded.fetchedAt.slice(0, 10)}, ${describeAge(loaded.fetchedAt, now)}`;
  switch (loaded.source) {
    case "registry":
      return `the ACP Registry, fetched just now from ${loaded.url}`;
    case "cache":
      return `the cached ACP Registry list (${when})`;
    case "snapshot":
      return `the snapshot of the ACP Registry shipped with acp-remote (${when})`;
  }
}

/** A registry agent as `--agent` named it: served as `name`, found by `query` (an id or a short name). */
export interface RegistryAgentRef {
  name: string;
  query: string;
}

/** The AgentSpec that runs a registry agent; throws AgentRegistryError with a message for the user. */
export function resolveRegistryAgent(loaded: LoadedAgentRegistry, ref: RegistryAgentRef): { spec: AgentSpec; id: string; version: string } {
  const agent = findRegistryAgent(loaded.registry, ref.query);
  return { spec: registryAgentSpec(agent, ref.name), id: agent.id, version: agent.version };
}

/** The text of `acp-remote agents`: where the list comes from, then each agent with what runs it. */
export function formatAgentList(loaded: LoadedAgentRegistry, now = Date.now()): string {
  const lines = [`Agents of the ACP Registry, from ${describeRegistrySource(loaded, now)}:`];
  if (loaded.refreshError !== undefined) lines.push(`(the registry could not be reached: ${loaded.refreshError})`);
  lines.push("");
  for (const agent of loaded.registry.agents) {
    lines.push(`${agent.id}  ${agent.name} ${agent.version}`);
    lines.push(`    ${agent.description}`);
    lines.push(`    runs: ${registryCommandLine(agent)}`);
    if (agent.authMethods && agent.authMethods.length > 0) {
      lines.push(`    authentication: ${agent.authMethods.map((m) => `${m.id} (${m.name})`).join(", ")}`);
    }
  }
  for (const problem of loaded.problems) lines.push(`skipped: ${problem}`);
  lines.push("", "Serve one with `acp-remote serve --agent ID` (or --agent NAME=registry:ID).");
  return lines.join("\n") + "\n";
}
