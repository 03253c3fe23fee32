// nginx for tests, run with a configuration the docs show (deploy/nginx.conf
// for the cluster, deploy/nginx-remote-access.conf for TLS under a path
// prefix): its ${ACP_REMOTE_*} values written in as envsubst would, into a
// temporary folder that is also its prefix; in the foreground, its error log
// on stderr. The folder goes when it is closed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { accepts, findProgram, freePort, ManagedProcess, removeOnExit, type Exit } from "./managed-process.ts";

export const NGINX_PACKAGE = "nginx-light";
export const NGINX_CONFIG = fileURLToPath(new URL("../../deploy/nginx.conf", import.meta.url));
/** One server with TLS in front of one sidecar, under /acp-remote/ (docs/remote-access.md). */
export const NGINX_REMOTE_ACCESS_CONFIG = fileURLToPath(new URL("../../deploy/nginx-remote-access.conf", import.meta.url));
/** Nodes of deploy/nginx.conf, in order. */
export const NGINX_NODES = ["n1", "n2", "n3"] as const;
/** A loopback address where nothing listens, for the nodes of the configuration a test does not run. */
const NO_NODE = "127.0.0.1:1";

export interface Nginx {
  /** Its base URL, `http://127.0.0.1:PORT` (the scheme is the cluster configuration's, which has no TLS). */
  readonly url: string;
  readonly port: number;
  readonly running: boolean;
  output(): string;
  stop(): Promise<Exit>;
  close(): Promise<void>;
}

export function nginxPath(): string | undefined {
  return findProgram("nginx");
}

/** deploy/nginx.conf with these variables written in, and no others (envsubst with a list of names). */
export function renderNginxConfig(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{(ACP_REMOTE_[A-Z0-9_]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

export async function startNginx(options: { nodes: readonly string[] }): Promise<Nginx> {
  if (options.nodes.length === 0 || options.nodes.length > NGINX_NODES.length) {
    throw new Error(`deploy/nginx.conf has ${NGINX_NODES.length} nodes; give 1 to ${NGINX_NODES.length}, not ${options.nodes.length}`);
  }
  const port = await freePort();
  const values: Record<string, string> = { ACP_REMOTE_LB_BIND: `127.0.0.1:${port}` };
  NGINX_NODES.forEach((_, i) => {
    values[`ACP_REMOTE_NODE${i + 1}`] = options.nodes[i] ?? NO_NODE;
  });
  return startNginxWith({ template: NGINX_CONFIG, port, values });
}

/**
 * nginx with the configuration `template` (a file of deploy/), `values`
 * written in; ready once it accepts connections on `port`, which the values
 * must make it listen on (127.0.0.1).
 */
export async function startNginxWith(options: { template: string; port: number; values: Record<string, string> }): Promise<Nginx> {
  const program = nginxPath();
  if (program === undefined) throw new Error(`nginx is not installed: install the Debian package ${NGINX_PACKAGE} (apt-get install ${NGINX_PACKAGE})`);
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-nginx-"));
  const forget = removeOnExit(dir);
  const remove = (): void => {
    rmSync(dir, { recursive: true, force: true });
    forget();
  };
  mkdirSync(join(dir, "logs"));
  const { port } = options;
  const config = join(dir, "nginx.conf");
  writeFileSync(config, renderNginxConfig(readFileSync(options.template, "utf8"), options.values));
  const managed = new ManagedProcess({
    name: "nginx",
    command: program,
    // Its workers go with it, even after a SIGKILL of the master.
    group: true,
    // -e: the error log before the configuration is read; -g: what a service manager would set.
    args: ["-p", dir, "-c", config, "-e", "stderr", "-g", `daemon off; pid ${join(dir, "nginx.pid")};`],
  });
  try {
    await managed.start(() => accepts(port));
  } catch (error) {
    remove();
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get running() {
      return managed.running;
    },
    output: () => managed.output(),
    stop: () => managed.stop(),
    async close() {
      await managed.stop();
      remove();
    },
  };
}
