// The ACP Registry's wire shapes: `registry.json`, the aggregated list of ACP
// agents the registry publishes, and the snapshot file acp-remote keeps of it
// (shipped with the package, and cached in the data folder after a refresh).
// Parsing and resolving live in common/agent-registry.ts.

/** Where the registry publishes its aggregated list. */
export const ACP_REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

/** `distribution.binary` targets: `<os>-<arch>` as the registry spells them. */
export const REGISTRY_PLATFORMS = ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"] as const;
export type RegistryPlatform = (typeof REGISTRY_PLATFORMS)[number];

/** An npm package run with `npx`, or a PyPI package run with `uvx`. */
export interface RegistryPackageDistribution {
  /** The package, usually pinned: `@scope/name@1.2.3` (npm), `name==1.2.3` (PyPI). */
  package: string;
  args?: string[];
  env?: Record<string, string>;
}

/** One platform's archive of a binary distribution. */
export interface RegistryBinaryTarget {
  /** URL of a .tar.gz or .zip holding the agent. */
  archive: string;
  /** The executable inside the extracted archive (`./agent`). */
  cmd: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface RegistryDistribution {
  npx?: RegistryPackageDistribution;
  uvx?: RegistryPackageDistribution;
  binary?: Partial<Record<RegistryPlatform, RegistryBinaryTarget>>;
}

/**
 * An authentication method, as an agent announces it in `initialize`; a
 * registry entry may list them ahead of a run. `type` is absent or `agent` (the
 * agent runs the flow), `terminal` (the agent's own terminal set-up, run with
 * `args` and `env`) or `env_var` (a variable to set).
 */
export interface RegistryAuthMethod {
  id: string;
  name: string;
  description?: string;
  type?: string;
  args?: string[];
  env?: Record<string, string>;
}

/** One agent of the registry (its `<id>/agent.json`). */
export interface RegistryAgent {
  /** Lowercase letters, digits and hyphens; starts with a letter. */
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string;
  authors?: string[];
  license?: string;
  icon?: string;
  distribution: RegistryDistribution;
  authMethods?: RegistryAuthMethod[];
}

/** `registry.json`. */
export interface AgentRegistry {
  /** The format's version (semver). */
  version: string;
  agents: RegistryAgent[];
  extensions?: RegistryAgent[];
}

/** The `format` of a snapshot file. */
export const AGENT_REGISTRY_SNAPSHOT_FORMAT = "acp-remote/agent-registry-snapshot";

/** A copy of `registry.json` with where and when it was fetched: the shipped snapshot and the data folder's cache. */
export interface AgentRegistrySnapshot {
  format: typeof AGENT_REGISTRY_SNAPSHOT_FORMAT;
  formatVersion: 1;
  /** Where the registry was fetched from. */
  url: string;
  /** When it was fetched (ISO 8601). */
  fetchedAt: string;
  registry: AgentRegistry;
}
