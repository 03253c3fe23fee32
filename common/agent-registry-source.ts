// Where the agent list comes from: the registry's published URL when it can
// be reached (the answer is kept in a cache file), else that cache, else the
// snapshot shipped with the package. A refresh that fails does so quietly and
// within its timeout: the reason is returned, never thrown, so a machine
// without network starts as fast as one with it.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { makePrivateFolder, PRIVATE_FILE_MODE } from "./private-files.ts";
import { ACP_REGISTRY_URL, AGENT_REGISTRY_SNAPSHOT_FORMAT, type AgentRegistry, type AgentRegistrySnapshot } from "../protocol/agent-registry.ts";
import { AgentRegistryError, parseAgentRegistry, parseAgentRegistrySnapshot } from "./agent-registry.ts";
import SHIPPED_SNAPSHOT from "./agent-registry-snapshot.json" with { type: "json" };

/** The cache file's name in the data folder. */
export const AGENT_REGISTRY_CACHE_FILE = "agent-registry.json";

export type AgentRegistrySourceKind = "registry" | "cache" | "snapshot";

export interface LoadedAgentRegistry {
  registry: AgentRegistry;
  /** Fetched just now, the cache of an earlier fetch, or the snapshot shipped with the package. */
  source: AgentRegistrySourceKind;
  url: string;
  /** When the list was fetched from the registry (ISO 8601). */
  fetchedAt: string;
  /** Entries skipped because they failed their checks. */
  problems: string[];
  /** Why a refresh was not used (no network, a timeout, a bad answer); absent when none was tried or it worked. */
  refreshError?: string;
}

export interface AgentRegistryLoadOptions {
  /** The cache file (in the data folder); none: neither read nor written. */
  cacheFile?: string;
  /** Where to refresh from; "" never refreshes. Default: the registry's published URL. */
  url?: string;
  /** Time the refresh may take, connection and body, in milliseconds. */
  timeoutMs: number;
  /** Largest answer accepted, in bytes. */
  maxBytes: number;
  /** A cache younger than this is used without asking the registry, in milliseconds. */
  refreshAfterMs: number;
  now?: () => number;
}

function fromSnapshot(snapshot: AgentRegistrySnapshot & { problems: string[] }, source: AgentRegistrySourceKind): LoadedAgentRegistry {
  return { registry: snapshot.registry, source, url: snapshot.url, fetchedAt: snapshot.fetchedAt, problems: snapshot.problems };
}

/** The snapshot shipped with the package. */
export function shippedAgentRegistry(): LoadedAgentRegistry {
  return fromSnapshot(parseAgentRegistrySnapshot(SHIPPED_SNAPSHOT), "snapshot");
}

/** The cache when it is there and sound, else undefined (a broken cache is as good as none). */
function readCache(cacheFile: string | undefined): LoadedAgentRegistry | undefined {
  if (cacheFile === undefined) return undefined;
  try {
    const cached = fromSnapshot(parseAgentRegistrySnapshot(JSON.parse(readFileSync(cacheFile, "utf8"))), "cache");
    return cached.registry.agents.length > 0 ? cached : undefined;
  } catch {
    return undefined;
  }
}

/** Without the network: the cache, else the shipped snapshot. */
export function loadAgentRegistryOffline(cacheFile?: string): LoadedAgentRegistry {
  return readCache(cacheFile) ?? shippedAgentRegistry();
}

async function fetchRegistry(url: string, timeoutMs: number, maxBytes: number): Promise<{ registry: AgentRegistry; problems: string[] }> {
  const signal = AbortSignal.timeout(timeoutMs);
  const response = await fetch(url, { signal, headers: { accept: "application/json" } });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new AgentRegistryError(`${url} answered HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AgentRegistryError(`${url} answered ${declared} bytes, more than ${maxBytes}`);
  }
  const text = await boundedText(response, maxBytes, url);
  const parsed = parseAgentRegistry(JSON.parse(text));
  if (parsed.registry.agents.length === 0) throw new AgentRegistryError(`${url} lists no usable agent`);
  return parsed;
}

/**
 * The body as text, counted in bytes as it arrives: once past `maxBytes` the
 * read stops and the body is dropped at once, whatever the server sends
 * after (a body without Content-Length may be endless).
 */
async function boundedText(response: Response, maxBytes: number, url: string): Promise<string> {
  const body = response.body;
  if (body === null) return "";
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AgentRegistryError(`${url} answered more than ${maxBytes} bytes`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString("utf8");
}

function writeCache(cacheFile: string, snapshot: AgentRegistrySnapshot): void {
  // The sidecar's cache is in its data folder, which stays readable by its owner only.
  makePrivateFolder(dirname(cacheFile));
  // Written aside and renamed, so a reader never sees half a file.
  const partial = `${cacheFile}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(snapshot, null, 2) + "\n", { mode: PRIVATE_FILE_MODE });
  renameSync(partial, cacheFile);
}

function reason(error: unknown): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return "no answer in time";
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/**
 * The freshest list to be had: a cache younger than `refreshAfterMs` as it
 * is; otherwise the registry is asked (within `timeoutMs`) and its answer
 * cached; when that fails, the cache, then the shipped snapshot, with the
 * reason in `refreshError`.
 */
export async function loadAgentRegistry(options: AgentRegistryLoadOptions): Promise<LoadedAgentRegistry> {
  const now = options.now ?? Date.now;
  const cached = readCache(options.cacheFile);
  if (cached && now() - Date.parse(cached.fetchedAt) < options.refreshAfterMs) return cached;
  const url = options.url ?? ACP_REGISTRY_URL;
  if (url === "") return cached ?? shippedAgentRegistry();
  try {
    const { registry, problems } = await fetchRegistry(url, options.timeoutMs, options.maxBytes);
    const snapshot: AgentRegistrySnapshot = { format: AGENT_REGISTRY_SNAPSHOT_FORMAT, formatVersion: 1, url, fetchedAt: new Date(now()).toISOString(), registry };
    let refreshError: string | undefined;
    if (options.cacheFile !== undefined) {
      try {
        writeCache(options.cacheFile, snapshot);
      } catch (error) {
        refreshError = `fetched, but not cached: ${(error as Error).message}`;
      }
    }
    return { registry, source: "registry", url, fetchedAt: snapshot.fetchedAt, problems, ...(refreshError ? { refreshError } : {}) };
  } catch (error) {
    return { ...(cached ?? shippedAgentRegistry()), refreshError: `${url}: ${reason(error)}` };
  }
}
