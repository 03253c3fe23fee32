// The processes the cluster benchmark measures, all started once and kept for
// the whole run so that every round measures every setup in turn: one node on
// the embedded SQLite store (the baseline), one node on a Redis of its own,
// and three nodes on a shared Redis behind HAProxy (deploy/haproxy.cfg) whose
// own URLs are also used directly. Every node is the real CLI
// (`acp-remote serve`, from source, through test/helpers/cluster.ts) with the
// fixture agent, the same token, and the /v1 admission limits lifted
// (cluster-node-limits.ts). Each Redis has an append-only file, fsynced every
// second by default (Redis's own default, and as durable as the SQLite
// store's WAL with synchronous=NORMAL), or on every write with
// `--fsync=always`.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { createClient } from "redis";
import { STORE_FILE } from "../sidecar/store/store.ts";
import { startCluster, type Cluster } from "../test/helpers/cluster.ts";
import { startRedisServer, type RedisServer } from "../test/helpers/redis-server.ts";

export type Fsync = "everysec" | "always";

/** The model every /v1 request names: the fixture agent's name in test/helpers/cluster.ts. */
export const MODEL = "fixture";

const LIMITS_PRELOAD = fileURLToPath(new URL("./cluster-node-limits.ts", import.meta.url));

function newClient(server: RedisServer) {
  return createClient(server.clientOptions());
}
type Client = ReturnType<typeof newClient>;

/** How many deferred jobs a setup's store holds that are not finished. */
export interface JobCounts {
  /** Pending or running. */
  active(): Promise<number>;
  running(): Promise<number>;
}

/** A Redis as the bench reads it: its CPU time and command counts (INFO), and the jobs still to run. */
export class RedisProbe implements JobCounts {
  readonly server: RedisServer;
  readonly #client: Client;

  private constructor(server: RedisServer, client: Client) {
    this.server = server;
    this.#client = client;
  }

  static async start(fsync: Fsync): Promise<RedisProbe> {
    // Later flags win over the helper's `--appendfsync always`.
    const server = await startRedisServer({ extraArgs: ["--appendfsync", fsync] });
    const client = newClient(server);
    client.on("error", () => {});
    try {
      await client.connect();
    } catch (error) {
      await server.close();
      throw error;
    }
    return new RedisProbe(server, client);
  }

  async #info(section: string): Promise<Map<string, string>> {
    const text = String(await this.#client.sendCommand(["INFO", section]));
    const fields = new Map<string, string>();
    for (const line of text.split("\r\n")) {
      const at = line.indexOf(":");
      if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1));
    }
    return fields;
  }

  /** Redis's CPU time so far (user + system, all its threads), in microseconds. */
  async cpuMicros(): Promise<number> {
    const cpu = await this.#info("cpu");
    return (Number(cpu.get("used_cpu_user")) + Number(cpu.get("used_cpu_sys"))) * 1e6;
  }

  /**
   * Commands Redis has run so far, INFO itself not counted: `all` counts the
   * commands a script runs as well; `scripts` only EVALSHA and EVAL, each one
   * round trip (the store makes every call on a request's path one script).
   */
  async commands(): Promise<{ all: number; scripts: number }> {
    let all = 0;
    let scripts = 0;
    for (const [name, value] of await this.#info("commandstats")) {
      if (name === "cmdstat_info") continue;
      const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
      all += calls;
      if (name === "cmdstat_evalsha" || name === "cmdstat_eval") scripts += calls;
    }
    return { all, scripts };
  }

  /** Deferred jobs pending or running (sidecar/store/redis/index.ts: the queues and the running set). */
  async active(): Promise<number> {
    const queues = (await this.#client.sendCommand(["KEYS", "acp-remote:jobs:pending:*"])) as string[];
    let n = await this.running();
    for (const queue of queues) n += Number(await this.#client.sendCommand(["ZCARD", queue]));
    return n;
  }

  /** The node that runs job `id` (its `--node-id`), or undefined when none does. */
  async runnerOf(id: string): Promise<string | undefined> {
    const node = await this.#client.sendCommand(["HGET", `acp-remote:job:${id}`, "node"]);
    return typeof node === "string" ? node : undefined;
  }

  /** Deferred jobs running on some node. */
  async running(): Promise<number> {
    return Number(await this.#client.sendCommand(["SCARD", "acp-remote:jobs:running"]));
  }

  async close(): Promise<void> {
    this.#client.destroy();
    await this.server.close();
  }
}

export interface Fleet {
  /** One node, the embedded SQLite store. */
  sqlite: Cluster;
  /** One node on a Redis of its own. */
  redisNode: Cluster;
  redisOne: RedisProbe;
  /** Three nodes on one Redis, HAProxy in front (cluster.url). */
  cluster: Cluster;
  redisShared: RedisProbe;
  fsync: Fsync;
  close(): Promise<void>;
}

function nodeOptions(store: RedisProbe | undefined) {
  return {
    balancer: "none" as const,
    env: { NODE_OPTIONS: `--import=${LIMITS_PRELOAD}` },
    args: (node: { id: string }) => (store === undefined ? [] : [...store.server.serveArgs, "--node-id", node.id]),
  };
}

export async function startFleet(fsync: Fsync, log: (line: string) => void): Promise<Fleet> {
  const started: Array<{ close(): Promise<void> }> = [];
  const track = <T extends { close(): Promise<void> }>(x: T): T => (started.push(x), x);
  try {
    log("starting Redis (two servers), one node on SQLite, one node on Redis, three nodes on Redis behind HAProxy");
    const redisOne = track(await RedisProbe.start(fsync));
    const redisShared = track(await RedisProbe.start(fsync));
    const sqlite = track(await startCluster({ nodes: 1, ...nodeOptions(undefined) }));
    const redisNode = track(await startCluster({ nodes: 1, ...nodeOptions(redisOne) }));
    const cluster = track(await startCluster({ nodes: 3, ...nodeOptions(redisShared), balancer: "haproxy" }));
    return {
      sqlite,
      redisNode,
      redisOne,
      cluster,
      redisShared,
      fsync,
      async close() {
        // Nodes first, then their stores.
        await Promise.all([sqlite.close(), redisNode.close(), cluster.close()]);
        await Promise.all([redisOne.close(), redisShared.close()]);
      },
    };
  } catch (error) {
    for (const x of started.reverse()) await x.close().catch(() => {});
    throw error;
  }
}

/** The deferred jobs in a node's SQLite file, read beside the node's own connection. */
export function sqliteJobs(dataDir: string): JobCounts {
  const count = async (states: string): Promise<number> => {
    const db = new DatabaseSync(join(dataDir, STORE_FILE), { readOnly: true });
    try {
      const row = db.prepare(`SELECT count(*) AS n FROM v1_jobs WHERE state IN (${states})`).get() as { n: number };
      return Number(row.n);
    } finally {
      db.close();
    }
  };
  return { active: () => count("'pending', 'running'"), running: () => count("'running'") };
}

let ticksPerSecond: number | undefined;

/** CPU time (user + system) of a process so far, in microseconds, from /proc (Linux); NaN when it cannot be read. */
export function processCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime), counted from the state (field 3) here.
    return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6;
  } catch {
    return Number.NaN;
  }
}
