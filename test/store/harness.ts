// The two implementations of the shared store, as the rows of the table see
// them: node A's store, node B's store, and more nodes on demand.
//
// On Redis each node is a store of its own (its own connections, its own node
// id) on one real redis-server, emptied before each row. The embedded store is
// one node by design (one process owns the file): there, every node of a row
// is that same store, and rows that need two distinct nodes are marked
// `cluster` and skipped, saying why.
import { createClient } from "redis";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { openStore } from "../../sidecar/store/store.ts";
import { sqliteStore } from "../../sidecar/store/sqlite/index.ts";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";

export interface RowContext {
  kind: "sqlite" | "redis";
  /** Node A. */
  a: SharedStore;
  /** Node B: another node on Redis, node A itself on the embedded store. */
  b: SharedStore;
  /** One more node (closed after the row): on the embedded store, node A again. */
  open(nodeId: string): Promise<SharedStore>;
}

export interface Row {
  name: string;
  /** Needs two distinct nodes: Redis only. */
  cluster?: true;
  run(ctx: RowContext): Promise<void>;
}

export interface Implementation {
  kind: "sqlite" | "redis";
  /** A fresh store for one row; `close` ends every store it opened. */
  fresh(): Promise<RowContext & { close(): Promise<void> }>;
}

export const sqliteImplementation: Implementation = {
  kind: "sqlite",
  async fresh() {
    const store = sqliteStore(openStore(":memory:"), "node-a");
    return { kind: "sqlite", a: store, b: store, open: async () => store, close: () => store.close() };
  },
};

/** Where a Redis is and the certificate its TLS certificate chains to (test/helpers/redis-server.ts). */
export interface RedisAddress {
  url: string;
  ca: string;
}

/** Stores on the Redis `server` names, which is emptied (FLUSHALL) before each row. */
export function redisImplementation(server: () => RedisAddress): Implementation {
  return {
    kind: "redis",
    async fresh() {
      const { url, ca } = server();
      await flushAll(url, ca);
      const opened: SharedStore[] = [];
      const open = async (nodeId: string): Promise<SharedStore> => {
        const store = await openRedisStore(url, { nodeId, ca });
        opened.push(store);
        return store;
      };
      const a = await open("node-a");
      const b = await open("node-b");
      return { kind: "redis", a, b, open, close: async () => void (await Promise.all(opened.map((s) => s.close()))) };
    },
  };
}

/** A plain client of the test's own, to look at or change the keys behind the store's back. */
export async function rawClient(url: string, ca: string) {
  const client = createClient({ url, RESP: 2, socket: { tls: true, ca } });
  client.on("error", () => undefined);
  await client.connect();
  return client;
}

async function flushAll(url: string, ca: string): Promise<void> {
  const client = await rawClient(url, ca);
  try {
    await client.sendCommand(["FLUSHALL"]);
  } finally {
    client.destroy();
  }
}

/** A clock the test moves by hand. */
export class ManualClock {
  now = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

/** Polls `condition` until it holds, failing after `deadlineMs`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
