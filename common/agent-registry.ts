// The ACP Registry as data: `registry.json` and our snapshot files parsed and
// checked (protocol/agent-registry.ts has the shapes), an agent found by its id
// or its short name, and an entry turned into the AgentSpec that runs it, at
// the version the registry pins. Pure: the sidecar (`--agent claude`,
// `acp-remote agents`) and the extension (Add Agent) decide alike.
import type { AgentSpec } from "../protocol/agent-spec.ts";
import {
  AGENT_REGISTRY_SNAPSHOT_FORMAT,
  REGISTRY_PLATFORMS,
  type AgentRegistry,
  type AgentRegistrySnapshot,
  type RegistryAgent,
  type RegistryAuthMethod,
  type RegistryBinaryTarget,
  type RegistryDistribution,
  type RegistryPackageDistribution,
  type RegistryPlatform,
} from "../protocol/agent-registry.ts";

/** A registry or snapshot that cannot be used at all, or an agent that cannot be resolved; the message is for the user. */
export class AgentRegistryError extends Error {
  override name = "AgentRegistryError";
}

const AGENT_ID = /^[a-z][a-z0-9-]*$/;
const SEMVER_PREFIX = /^[0-9]+\.[0-9]+\.[0-9]+/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
const isStringMap = (v: unknown): v is Record<string, string> => isObj(v) && Object.values(v).every((s) => typeof s === "string");

/** A registry parsed: the agents that passed the checks, and what was wrong with the others (skipped). */
export interface ParsedRegistry {
  registry: AgentRegistry;
  problems: string[];
}

function packageDistribution(value: unknown, at: string): RegistryPackageDistribution {
  if (!isObj(value) || typeof value["package"] !== "string" || value["package"].trim() === "") throw new AgentRegistryError(`${at}.package must be a non-empty string`);
  if (value["args"] !== undefined && !isStringArray(value["args"])) throw new AgentRegistryError(`${at}.args must be an array of strings`);
  if (value["env"] !== undefined && !isStringMap(value["env"])) throw new AgentRegistryError(`${at}.env must map names to strings`);
  return {
    package: value["package"].trim(),
    ...(value["args"] === undefined ? {} : { args: value["args"] }),
    ...(value["env"] === undefined ? {} : { env: value["env"] }),
  };
}

function binaryDistribution(value: unknown, at: string): RegistryDistribution["binary"] {
  if (!isObj(value)) throw new AgentRegistryError(`${at} must be an object of platforms`);
  const targets: Partial<Record<RegistryPlatform, RegistryBinaryTarget>> = {};
  for (const [platform, target] of Object.entries(value)) {
    // A platform this version does not know is skipped, not fatal: the registry may add some.
    if (!(REGISTRY_PLATFORMS as readonly string[]).includes(platform)) continue;
    const where = `${at}.${platform}`;
    if (!isObj(target) || typeof target["archive"] !== "string" || typeof target["cmd"] !== "string") throw new AgentRegistryError(`${where} needs archive and cmd strings`);
    if (target["args"] !== undefined && !isStringArray(target["args"])) throw new AgentRegistryError(`${where}.args must be an array of strings`);
    if (target["env"] !== undefined && !isStringMap(target["env"])) throw new AgentRegistryError(`${where}.env must map names to strings`);
    targets[platform as RegistryPlatform] = {
      archive: target["archive"],
      cmd: target["cmd"],
      ...(target["args"] === undefined ? {} : { args: target["args"] as string[] }),
      ...(target["env"] === undefined ? {} : { env: target["env"] as Record<string, string> }),
    };
  }
  return targets;
}

function authMethods(value: unknown, at: string): RegistryAuthMethod[] {
  if (!Array.isArray(value)) throw new AgentRegistryError(`${at} must be an array`);
  return value.map((m: unknown, i): RegistryAuthMethod => {
    if (!isObj(m) || typeof m["id"] !== "string" || typeof m["name"] !== "string") throw new AgentRegistryError(`${at}[${i}] needs id and name strings`);
    return {
      id: m["id"],
      name: m["name"],
      ...(typeof m["description"] === "string" ? { description: m["description"] } : {}),
      ...(typeof m["type"] === "string" ? { type: m["type"] } : {}),
      ...(isStringArray(m["args"]) ? { args: m["args"] } : {}),
      ...(isStringMap(m["env"]) ? { env: m["env"] } : {}),
    };
  });
}

/** One entry of `agents`, checked against the registry's schema; throws AgentRegistryError naming the field. */
function parseRegistryAgent(value: unknown, at = "agent"): RegistryAgent {
  if (!isObj(value)) throw new AgentRegistryError(`${at} must be an object`);
  const { id, name, version, description, distribution } = value;
  if (typeof id !== "string" || !AGENT_ID.test(id)) throw new AgentRegistryError(`${at}.id must be lowercase letters, digits and hyphens, starting with a letter`);
  const here = `${at} (${id})`;
  if (typeof name !== "string" || name.trim() === "") throw new AgentRegistryError(`${here}: name must be a non-empty string`);
  if (typeof version !== "string" || !SEMVER_PREFIX.test(version)) throw new AgentRegistryError(`${here}: version must be a semantic version`);
  if (typeof description !== "string" || description.trim() === "") throw new AgentRegistryError(`${here}: description must be a non-empty string`);
  if (!isObj(distribution)) throw new AgentRegistryError(`${here}: distribution must be an object`);
  const dist: RegistryDistribution = {};
  if (distribution["npx"] !== undefined) dist.npx = packageDistribution(distribution["npx"], `${here}: distribution.npx`);
  if (distribution["uvx"] !== undefined) dist.uvx = packageDistribution(distribution["uvx"], `${here}: distribution.uvx`);
  if (distribution["binary"] !== undefined) dist.binary = binaryDistribution(distribution["binary"], `${here}: distribution.binary`);
  if (!dist.npx && !dist.uvx && !dist.binary) throw new AgentRegistryError(`${here}: distribution has none of npx, uvx or binary`);
  const agent: RegistryAgent = { id, name: name.trim(), version, description: description.trim(), distribution: dist };
  if (typeof value["repository"] === "string") agent.repository = value["repository"];
  if (isStringArray(value["authors"])) agent.authors = value["authors"];
  if (typeof value["license"] === "string") agent.license = value["license"];
  if (typeof value["icon"] === "string") agent.icon = value["icon"];
  if (value["authMethods"] !== undefined) agent.authMethods = authMethods(value["authMethods"], `${here}: authMethods`);
  return agent;
}

/**
 * `registry.json`: the list must be there; an entry that fails its checks is
 * skipped and named in `problems`, so one bad entry does not hide the others.
 */
export function parseAgentRegistry(value: unknown): ParsedRegistry {
  if (!isObj(value)) throw new AgentRegistryError("registry.json must be a JSON object");
  if (typeof value["version"] !== "string" || !SEMVER_PREFIX.test(value["version"])) throw new AgentRegistryError("registry.json: version must be a semantic version");
  if (value["version"].split(".")[0] !== "1") throw new AgentRegistryError(`registry.json: format version ${value["version"]} is not supported (1.x is)`);
  if (!Array.isArray(value["agents"])) throw new AgentRegistryError("registry.json: agents must be an array");
  const problems: string[] = [];
  const agents: RegistryAgent[] = [];
  const seen = new Set<string>();
  value["agents"].forEach((entry: unknown, i) => {
    try {
      const agent = parseRegistryAgent(entry, `agents[${i}]`);
      if (seen.has(agent.id)) throw new AgentRegistryError(`agents[${i}]: id ${agent.id} appears twice`);
      seen.add(agent.id);
      agents.push(agent);
    } catch (error) {
      problems.push((error as Error).message);
    }
  });
  return { registry: { version: value["version"], agents }, problems };
}

/** A snapshot file (the shipped one, or the data folder's cache). Throws AgentRegistryError when it is not one. */
export function parseAgentRegistrySnapshot(value: unknown): AgentRegistrySnapshot & { problems: string[] } {
  if (!isObj(value) || value["format"] !== AGENT_REGISTRY_SNAPSHOT_FORMAT || value["formatVersion"] !== 1) {
    throw new AgentRegistryError(`not an ${AGENT_REGISTRY_SNAPSHOT_FORMAT} file of version 1`);
  }
  const fetchedAt = value["fetchedAt"];
  if (typeof fetchedAt !== "string" || Number.isNaN(Date.parse(fetchedAt))) throw new AgentRegistryError("fetchedAt must be a date");
  if (typeof value["url"] !== "string") throw new AgentRegistryError("url must be a string");
  const { registry, problems } = parseAgentRegistry(value["registry"]);
  return { format: AGENT_REGISTRY_SNAPSHOT_FORMAT, formatVersion: 1, url: value["url"], fetchedAt, registry, problems };
}

/** The registry's name of this machine's platform, for binary distributions. */
export function registryPlatform(platform: string = process.platform, arch: string = process.arch): RegistryPlatform | undefined {
  const os = platform === "win32" ? "windows" : platform;
  const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : arch;
  const name = `${os}-${cpu}`;
  return (REGISTRY_PLATFORMS as readonly string[]).includes(name) ? (name as RegistryPlatform) : undefined;
}

/**
 * The agent `query` names: its id, or else the one agent whose id starts with
 * `query-` (`claude` finds `claude-code-acp`, `qwen` finds `qwen-code`).
 * Throws AgentRegistryError listing the candidates when none or several match.
 */
export function findRegistryAgent(registry: AgentRegistry, query: string): RegistryAgent {
  const wanted = query.trim().toLowerCase();
  const exact = registry.agents.find((a) => a.id === wanted);
  if (exact) return exact;
  const prefixed = registry.agents.filter((a) => a.id.startsWith(`${wanted}-`));
  if (prefixed.length === 1) return prefixed[0]!;
  if (prefixed.length > 1) throw new AgentRegistryError(`"${query}" names several agents of the ACP Registry: ${prefixed.map((a) => a.id).join(", ")}; give the whole id`);
  throw new AgentRegistryError(`"${query}" is not an agent of the ACP Registry (known: ${registry.agents.map((a) => a.id).join(", ")})`);
}

/** `name@version` unless the package already names a version (`@scope/name@1.2.3`); a scope's `@` is not one. */
export function pinnedNpmPackage(pkg: string, version: string): string {
  return pkg.lastIndexOf("@") > 0 ? pkg : `${pkg}@${version}`;
}

/** `name==version` unless the requirement already pins or bounds one. */
export function pinnedPypiPackage(pkg: string, version: string): string {
  return /[=<>~!@]/.test(pkg) ? pkg : `${pkg}==${version}`;
}

/** How an entry runs here: `npx` and `uvx` need their tool on PATH; `binary` needs its archive extracted first. */
export type RegistryRunner = "npx" | "uvx" | "binary";

/** The distribution this machine uses, by preference: npx (acp-remote runs on Node, so npx is there), uvx, then a binary for this platform. */
function registryRunner(agent: RegistryAgent, platform = registryPlatform()): RegistryRunner | undefined {
  if (agent.distribution.npx) return "npx";
  if (agent.distribution.uvx) return "uvx";
  if (platform !== undefined && agent.distribution.binary?.[platform]) return "binary";
  return undefined;
}

/**
 * The AgentSpec that runs a registry entry under `name`, at the version the
 * registry pins: `npx -y PACKAGE@VERSION ARGS`, `uvx PACKAGE==VERSION ARGS`.
 * A binary distribution is not downloaded: the error says which archive to
 * extract and the `--agent` flag to give then.
 */
export function registryAgentSpec(agent: RegistryAgent, name: string = agent.id, platform = registryPlatform()): AgentSpec {
  const runner = registryRunner(agent, platform);
  const withEnv = (spec: AgentSpec, env: Record<string, string> | undefined): AgentSpec => (env && Object.keys(env).length > 0 ? { ...spec, env: { ...env } } : spec);
  if (runner === "npx") {
    const npx = agent.distribution.npx!;
    return withEnv({ name, command: "npx", args: ["-y", pinnedNpmPackage(npx.package, agent.version), ...(npx.args ?? [])] }, npx.env);
  }
  if (runner === "uvx") {
    const uvx = agent.distribution.uvx!;
    return withEnv({ name, command: "uvx", args: [pinnedPypiPackage(uvx.package, agent.version), ...(uvx.args ?? [])] }, uvx.env);
  }
  if (runner === "binary") {
    const target = agent.distribution.binary![platform!]!;
    const line = [target.cmd.replace(/^\.\//, "/path/to/"), ...(target.args ?? [])].join(" ");
    throw new AgentRegistryError(
      `${agent.name} (${agent.id}) ${agent.version} is published as an archive to download (${target.archive}); extract it and give --agent ${name}="${line}"`,
    );
  }
  const platforms = Object.keys(agent.distribution.binary ?? {}).join(", ");
  throw new AgentRegistryError(`${agent.name} (${agent.id}) has no distribution for ${platform ?? "this platform"}${platforms ? ` (only ${platforms})` : ""}`);
}

/** The command line of an entry, for lists and pickers: `npx -y pkg@1.2.3 --acp`, or `binary archive` when it needs a download. */
export function registryCommandLine(agent: RegistryAgent, platform = registryPlatform()): string {
  try {
    const spec = registryAgentSpec(agent, agent.id, platform);
    return [spec.command, ...spec.args].join(" ");
  } catch {
    return registryRunner(agent, platform) === "binary" ? "binary archive (download it yourself)" : "not available on this platform";
  }
}

/** How old a snapshot is, in words: `today`, `1 day old`, `12 days old`. */
export function describeAge(fetchedAt: string, now: number = Date.now()): string {
  const days = Math.floor((now - Date.parse(fetchedAt)) / 86_400_000);
  if (days <= 0) return "today";
  return days === 1 ? "1 day old" : `${days} days old`;
}
