// Opens the store `serve` runs on: the embedded SQLite file in the data
// folder, or the shared Redis store of several nodes (`--store redis://…`).
import { join } from "node:path";
import type { SharedStore } from "./shared-store.ts";
import { openSqliteStore } from "./sqlite/index.ts";
import { STORE_FILE } from "./store.ts";

export async function openSharedStore(options: {
  url?: string;
  /** PEM certificates a `rediss://` store's certificate must chain to; the system's CAs when absent. */
  ca?: string;
  dataDir: string;
  nodeId: string;
  log: (line: string) => void;
}): Promise<SharedStore> {
  const url = options.url;
  if (url === undefined || url.startsWith("sqlite:")) return openSqliteStore(join(options.dataDir, STORE_FILE), options.nodeId, options.log);
  if (url.startsWith("redis://") || url.startsWith("rediss://")) {
    // Loaded only when asked for: the embedded default needs none of it.
    const { openRedisStore } = await import("./redis/index.ts");
    return openRedisStore(url, { nodeId: options.nodeId, log: options.log, ...(options.ca === undefined ? {} : { ca: options.ca }) });
  }
  throw new Error(`unknown store "${url}": use redis://HOST:PORT/DB, or leave it out for the embedded store`);
}
