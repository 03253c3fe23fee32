// A real redis-server for tests, on a free loopback port, its data in a
// temporary folder: the append-only file on with `appendfsync always`, so a
// write Redis acknowledged survives stop(), kill() and start() again on the
// same port and folder, as it would on a server that restarts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findProgram, freePort, ManagedProcess, removeOnExit, type Exit } from "./managed-process.ts";

export const REDIS_SERVER_PACKAGE = "redis-server";

export interface RedisServer {
  /** `redis://127.0.0.1:PORT/0` */
  readonly url: string;
  readonly port: number;
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
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    // Every setting on the command line: no configuration file, nothing from the system's redis.conf.
    const managed = new ManagedProcess({
      name: `redis-server on port ${port}`,
      command: program,
      args: [
        "--port", String(port),
        "--bind", "127.0.0.1",
        "--dir", dir,
        "--appendonly", "yes",
        "--appendfsync", "always",
        // The AOF is the only persistence: no RDB snapshots in the background.
        "--save", "",
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
    return {
      url: `redis://127.0.0.1:${port}/0`,
      port,
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
