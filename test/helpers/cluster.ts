// Several `acp-remote serve` processes behind a balancer, as deployed: each
// node a real child (`node sidecar/cli/main.ts serve`, from source) on a free
// loopback port with its own data folder, the same token and the same node
// secret (ACP_REMOTE_NODE_SECRET, which a shared store needs), then HAProxy
// with deploy/haproxy.cfg (or nginx with deploy/nginx.conf) in front. Nodes
// are named n1, n2, n3, the balancer's names for them. Extra arguments (a
// shared store, a node id) are passed through as given.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, NODE } from "./connect-child.ts";
import { HAPROXY_SERVERS, haproxyPath, startHaproxy, type Haproxy } from "./haproxy.ts";
import { freePort, ManagedProcess, removeOnExit, type Exit } from "./managed-process.ts";
import { nginxPath, startNginx, type Nginx } from "./nginx.ts";
import { redisServerPath } from "./redis-server.ts";
import { FIXTURE_AGENT } from "./serve-child.ts";

export interface ClusterNode {
  /** 0-based: node(0) is n1. */
  readonly index: number;
  /** The balancer's name for it, n1, n2, n3: pass it on as `--node-id` when the test wants the two to agree. */
  readonly id: string;
  /** Its own base URL, bypassing the balancer. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The serve process, while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** What it wrote on stdout and stderr, across its starts. */
  output(): string;
  /** SIGKILL to it and its agents (its process group): a crash. Waits for the exit. */
  kill(): Promise<Exit>;
  /** SIGTERM (it drains, then closes) and waits for the exit. */
  stop(): Promise<Exit>;
  /** Starts it again on the same port and data folder, with the same arguments; resolves once it listens. */
  start(): Promise<void>;
  /** stop() if it runs, then start(). */
  restart(): Promise<void>;
}

export interface NodeInfo {
  index: number;
  id: string;
  port: number;
  dataDir: string;
}

export type Balancer = "haproxy" | "nginx" | "none";

export interface ClusterOptions {
  /** How many nodes, 1 to 3 (deploy/haproxy.cfg has three servers); 3 by default. */
  nodes?: number;
  /** The token every node accepts (`--token`). */
  token?: string;
  /** Extra arguments of each node's `serve`, e.g. `(node) => ["--store", redis.url, "--node-id", node.id]`. */
  args?: readonly string[] | ((node: NodeInfo) => readonly string[]);
  /** Extra environment of each node. */
  env?: Record<string, string>;
  /** `--agent` of each node; the fixture agent (test/fixtures/agent.ts) by default. */
  agent?: string;
  /** The balancer in front; HAProxy by default. */
  balancer?: Balancer;
}

export interface Cluster {
  /** The balancer's base URL (the first node's own URL with balancer "none"). */
  readonly url: string;
  readonly token: string;
  readonly nodes: readonly ClusterNode[];
  /** node(0) is n1. */
  node(index: number): ClusterNode;
  /** The node the balancer names `id` (n1, n2, n3). */
  nodeById(id: string): ClusterNode;
  readonly haproxy: Haproxy | undefined;
  readonly nginx: Nginx | undefined;
  /** Stops the balancer and every node (SIGKILL after the stop timeout) and removes their folders. */
  close(): Promise<void>;
}

export const CLUSTER_TOKEN = "cluster-test-token-0123456789";
/** The secret every node of a test cluster shares (ACP_REMOTE_NODE_SECRET); a test may give another with `env`. */
export const CLUSTER_NODE_SECRET = "cluster-test-node-secret-0123456789abcdef";
const LISTENING = /^acp-remote listening on (\S+)$/m;

/** Why cluster tests cannot run here (a program missing, with its Debian package), or undefined. */
export function clusterToolsMissing(balancer: Balancer = "haproxy", options: { redis?: boolean } = {}): string | undefined {
  const missing: string[] = [];
  if (balancer === "haproxy" && haproxyPath() === undefined) missing.push("haproxy (Debian package haproxy)");
  if (balancer === "nginx" && nginxPath() === undefined) missing.push("nginx (Debian package nginx-light)");
  if (options.redis === true) {
    if (redisServerPath() === undefined) missing.push("redis-server (Debian package redis-server)");
  }
  return missing.length === 0 ? undefined : `not installed: ${missing.join(", ")}`;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const count = options.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1 || count > HAPROXY_SERVERS.length) throw new Error(`a cluster has 1 to ${HAPROXY_SERVERS.length} nodes, not ${count}`);
  const token = options.token ?? CLUSTER_TOKEN;
  const nodes: ClusterNode[] = [];
  let haproxy: Haproxy | undefined;
  let nginx: Nginx | undefined;
  const closeAll = async (): Promise<void> => {
    await haproxy?.close();
    await nginx?.close();
    await Promise.all(nodes.map((node) => (node as ClusterNodeImpl).close()));
  };
  try {
    for (let index = 0; index < count; index++) {
      nodes.push(await ClusterNodeImpl.create(index, token, options));
    }
    await Promise.all(nodes.map((node) => node.start()));
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    const balancer = options.balancer ?? "haproxy";
    if (balancer === "haproxy") haproxy = await startHaproxy({ nodes: addresses });
    else if (balancer === "nginx") nginx = await startNginx({ nodes: addresses });
  } catch (error) {
    await closeAll();
    throw error;
  }
  const first = nodes[0] as ClusterNode;
  return {
    url: haproxy?.url ?? nginx?.url ?? first.url,
    token,
    nodes,
    node(index) {
      const node = nodes[index];
      if (node === undefined) throw new Error(`no node ${index}: the cluster has ${nodes.length} (0-based)`);
      return node;
    },
    nodeById(id) {
      const node = nodes.find((n) => n.id === id);
      if (node === undefined) throw new Error(`no node ${id}`);
      return node;
    },
    haproxy,
    nginx,
    close: closeAll,
  };
}

class ClusterNodeImpl implements ClusterNode {
  readonly index: number;
  readonly id: string;
  readonly port: number;
  readonly dataDir: string;
  readonly url: string;
  readonly #process: ManagedProcess;
  readonly #forgetFolder: () => void;

  private constructor(index: number, port: number, dataDir: string, process: ManagedProcess, forgetFolder: () => void) {
    this.index = index;
    this.id = HAPROXY_SERVERS[index] as string;
    this.port = port;
    this.dataDir = dataDir;
    this.url = `http://127.0.0.1:${port}`;
    this.#process = process;
    this.#forgetFolder = forgetFolder;
  }

  static async create(index: number, token: string, options: ClusterOptions): Promise<ClusterNodeImpl> {
    const id = HAPROXY_SERVERS[index] as string;
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), `acp-remote-node-${id}-`));
    const forget = removeOnExit(dataDir);
    const extra = typeof options.args === "function" ? options.args({ index, id, port, dataDir }) : (options.args ?? []);
    const args = [
      CLI, "serve",
      "--host", "127.0.0.1",
      "--port", String(port),
      "--data-dir", dataDir,
      "--token", token,
      "--agent", options.agent ?? `fixture=${NODE} ${FIXTURE_AGENT}`,
      ...extra,
    ];
    const process_ = new ManagedProcess({
      name: `node ${id} (port ${port})`,
      command: NODE,
      args,
      // No token or secret from the environment of the test run: the ones given are the ones.
      env: { ...process.env, ACP_REMOTE_TOKEN: "", ACP_REMOTE_NODE_SECRET: CLUSTER_NODE_SECRET, ACP_REMOTE_NODE_SECRET_FILE: "", ...options.env },
      group: true,
    });
    return new ClusterNodeImpl(index, port, dataDir, process_, forget);
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  get running(): boolean {
    return this.#process.running;
  }

  output(): string {
    return this.#process.output();
  }

  start(): Promise<void> {
    return this.#process.start(LISTENING);
  }

  stop(): Promise<Exit> {
    return this.#process.stop();
  }

  async kill(): Promise<Exit> {
    return this.#process.kill();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async close(): Promise<void> {
    await this.#process.stop();
    // Its agents too, should any outlive it.
    this.#process.killNow();
    rmSync(this.dataDir, { recursive: true, force: true });
    this.#forgetFolder();
  }
}
