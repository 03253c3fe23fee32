// A real redis-server for tests, on a free loopback port, its data in a
// temporary folder, run with deploy/redis.conf as a deployment runs it: TLS
// only (the test certificate of tls-cert.ts, for 127.0.0.1), a password
// (AUTH, from a file included on the command line), the append-only file on
// with `appendfsync always`, so a write Redis acknowledged survives stop(),
// kill() and start() again on the same port and folder, as it would on a
// server that restarts. Its address is `rediss://:PASSWORD@127.0.0.1:PORT/0`;
// clients trust `ca`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findProgram, freePort, ManagedProcess, removeOnExit, type Exit } from "./managed-process.ts";
import { testCert } from "./tls-cert.ts";

export const REDIS_SERVER_PACKAGE = "redis-server";
export const REDIS_CONFIG = fileURLToPath(new URL("../../deploy/redis.conf", import.meta.url));

export interface RedisServer {
  /** `rediss://:PASSWORD@127.0.0.1:PORT/0` */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** The certificate its TLS certificate chains to (PEM), and the file that holds it (for `--store-ca`). */
  readonly ca: string;
  readonly caFile: string;
  /** What a node's `serve` is given to use it: `--store URL --store-ca FILE`. */
  readonly serveArgs: readonly string[];
  /** Options of node-redis's createClient for it (RESP2, as the store speaks). */
  clientOptions(): { url: string; RESP: 2; socket: { tls: true; ca: string } };
  /** Its `dir`: the append-only files live here. */
  readonly dir: string;
  readonly running: boolean;
  /** What it logged, across its starts. */
  output(): string;
  /** Starts it again on the same port and folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM (Redis fsyncs and exits), then waits for the exit. */
  stop(): Promise<Exit>;
  /** SIGKILL, then waits for the exit: a crash, nothing flushed beyond what the AOF already holds. */
  kill(): Promise<Exit>;
  /** Stops it if it runs and removes its folder. */
  close(): Promise<void>;
}

/** The path of redis-server, or undefined when it is not installed. */
export function redisServerPath(): string | undefined {
  return findProgram("redis-server");
}

/** Tries another port when the one picked was taken in between, at most this many times. */
const PORT_ATTEMPTS = 5;

export async function startRedisServer(options: { extraArgs?: readonly string[] } = {}): Promise<RedisServer> {
  const program = redisServerPath();
  if (program === undefined) {
    throw new Error(`redis-server is not installed: install the Debian package ${REDIS_SERVER_PACKAGE} (apt-get install ${REDIS_SERVER_PACKAGE})`);
  }
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-redis-"));
  const forget = removeOnExit(dir);
  const remove = (): void => {
    rmSync(dir, { recursive: true, force: true });
    forget();
  };
  const cert = await testCert();
  const certFile = join(dir, "tls-cert.pem");
  const keyFile = join(dir, "tls-key.pem");
  const authFile = join(dir, "auth.conf");
  const password = randomBytes(24).toString("base64url");
  writeFileSync(certFile, cert.cert);
  writeFileSync(keyFile, cert.key, { mode: 0o600 });
  // The password as the docs keep it: a file of one line, included on the command line.
  writeFileSync(authFile, `requirepass ${password}\n`, { mode: 0o600 });
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    // deploy/redis.conf, with this test's port, files and folder given after it (they win).
    const managed = new ManagedProcess({
      name: `redis-server on port ${port}`,
      command: program,
      args: [
        REDIS_CONFIG,
        "--include", authFile,
        "--tls-port", String(port),
        "--tls-cert-file", certFile,
        "--tls-key-file", keyFile,
        "--bind", "127.0.0.1",
        "--dir", dir,
        "--daemonize", "no",
        "--logfile", "",
        ...(options.extraArgs ?? []),
      ],
    });
    try {
      await managed.start(/Ready to accept connections/);
    } catch (error) {
      lastError = error;
      if (/Address already in use/.test(managed.output())) continue;
      remove();
      throw error;
    }
    const url = `rediss://:${password}@127.0.0.1:${port}/0`;
    return {
      url,
      port,
      password,
      ca: cert.cert,
      caFile: certFile,
      serveArgs: ["--store", url, "--store-ca", certFile],
      clientOptions: () => ({ url, RESP: 2, socket: { tls: true, ca: cert.cert } }),
      dir,
      get running() {
        return managed.running;
      },
      output: () => managed.output(),
      start: () => managed.start(/Ready to accept connections/),
      stop: () => managed.stop(),
      kill: () => managed.kill(),
      async close() {
        await managed.stop();
        remove();
      },
    };
  }
  remove();
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
