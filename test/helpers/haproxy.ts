// HAProxy for tests, run with the very configuration the docs show
// (deploy/haproxy.cfg), its addresses given through the environment as in a
// deployment. A second configuration file, in a temporary folder, adds only
// an admin socket, through which the test reads what HAProxy thinks of each
// node (UP, DOWN) instead of guessing from timings.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findProgram, freePort, ManagedProcess, removeOnExit, type Exit } from "./managed-process.ts";

export const HAPROXY_PACKAGE = "haproxy";
export const HAPROXY_CONFIG = fileURLToPath(new URL("../../deploy/haproxy.cfg", import.meta.url));
/** The servers of deploy/haproxy.cfg, in order; their names are also their affinity cookie prefixes. */
export const HAPROXY_SERVERS = ["n1", "n2", "n3"] as const;
/** A loopback address where nothing listens: servers of the configuration left without a node point there and stay DOWN. */
export const NO_NODE = "127.0.0.1:1";

/** What HAProxy's `show stat` says of a server: "UP", "DOWN", "MAINT", "UP 1/2" (going down) and the like. */
export type ServerStatus = string;

export interface Haproxy {
  /** The balancer's base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  readonly running: boolean;
  /** HAProxy's log (one line per request) and messages. */
  output(): string;
  /** Each server's status by name (n1, n2, n3). */
  serverStatus(): Promise<Record<string, ServerStatus>>;
  /** Polls the statuses until each named server has the one given (e.g. { n1: "DOWN" }), at most `timeoutMs`. */
  waitForStatus(expected: Record<string, "UP" | "DOWN">, timeoutMs?: number): Promise<void>;
  stop(): Promise<Exit>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** The path of haproxy, or undefined when it is not installed. */
export function haproxyPath(): string | undefined {
  return findProgram("haproxy");
}

/** Long enough for `fall 2` checks `inter 2s` apart, with room for a slow machine; in milliseconds. */
const STATUS_TIMEOUT_MS = 30_000;

/**
 * Starts HAProxy with deploy/haproxy.cfg in front of `nodes` (host:port, at
 * most three, n1 first). Resolves once it accepts connections; with
 * `waitUntilUp` (the default), once every node given is UP as well.
 */
export async function startHaproxy(options: { nodes: readonly string[]; waitUntilUp?: boolean }): Promise<Haproxy> {
  const program = haproxyPath();
  if (program === undefined) throw new Error(`haproxy is not installed: install the Debian package ${HAPROXY_PACKAGE} (apt-get install ${HAPROXY_PACKAGE})`);
  if (options.nodes.length === 0 || options.nodes.length > HAPROXY_SERVERS.length) {
    throw new Error(`deploy/haproxy.cfg has ${HAPROXY_SERVERS.length} servers; give 1 to ${HAPROXY_SERVERS.length} nodes, not ${options.nodes.length}`);
  }
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-haproxy-"));
  const forget = removeOnExit(dir);
  const socket = join(dir, "admin.sock");
  const extra = join(dir, "test-admin.cfg");
  writeFileSync(extra, `# Added by the tests: the admin socket they read server statuses from.\nglobal\n    stats socket ${socket} mode 600 level admin\n`);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ACP_REMOTE_LB_BIND: `127.0.0.1:${port}` };
  HAPROXY_SERVERS.forEach((_, i) => {
    env[`ACP_REMOTE_NODE${i + 1}`] = options.nodes[i] ?? NO_NODE;
  });
  const managed = new ManagedProcess({ name: "haproxy", command: program, args: ["-f", HAPROXY_CONFIG, "-f", extra, "-db"], env, cwd: dir });
  const remove = (): void => {
    rmSync(dir, { recursive: true, force: true });
    forget();
  };
  try {
    // Its admin socket answers once the configuration is loaded and the port bound (a probe of the port itself would be logged as a bad request).
    await managed.start(() => adminCommand(socket, "show info\n").then((info) => info.includes("Pid:")));
  } catch (error) {
    remove();
    throw error;
  }

  const serverStatus = async (): Promise<Record<string, ServerStatus>> => {
    const csv = await adminCommand(socket, "show stat\n");
    const lines = csv.split("\n");
    const header = (lines[0] ?? "").replace(/^# /, "").split(",");
    const px = header.indexOf("pxname");
    const sv = header.indexOf("svname");
    const status = header.indexOf("status");
    const result: Record<string, ServerStatus> = {};
    for (const line of lines.slice(1)) {
      const fields = line.split(",");
      if (fields[px] === "sidecars" && HAPROXY_SERVERS.includes(fields[sv] as (typeof HAPROXY_SERVERS)[number])) {
        result[fields[sv] as string] = fields[status] ?? "";
      }
    }
    return result;
  };

  const waitForStatus = async (expected: Record<string, "UP" | "DOWN">, timeoutMs = STATUS_TIMEOUT_MS): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last: Record<string, ServerStatus> = {};
    for (;;) {
      last = await serverStatus().catch(() => last);
      if (Object.entries(expected).every(([name, status]) => last[name] === status)) return;
      if (Date.now() > deadline) throw new Error(`HAProxy's servers are ${JSON.stringify(last)}, not ${JSON.stringify(expected)}, after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const haproxy: Haproxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    get running() {
      return managed.running;
    },
    output: () => managed.output(),
    serverStatus,
    waitForStatus,
    stop: () => managed.stop(),
    async close() {
      await managed.stop();
      remove();
    },
  };
  if (options.waitUntilUp !== false) {
    try {
      await waitForStatus(Object.fromEntries(options.nodes.map((_, i) => [HAPROXY_SERVERS[i] as string, "UP" as const])));
    } catch (error) {
      await haproxy.close();
      throw error;
    }
  }
  return haproxy;
}

/** One command on HAProxy's admin socket; resolves with the whole answer. */
function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.end(command));
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}
