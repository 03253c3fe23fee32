// A real redis-server for the store's tests: on a free port, in a temporary
// folder, with every write appended and fsynced (AOF, appendfsync always) and
// no snapshots, so that a killed and restarted server has every write back.
// It can be killed, restarted on the same port and folder, and paused (a
// server that stops answering without closing its connections).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** How long a starting server gets to answer PING (it loads its AOF first), in milliseconds. */
const START_DEADLINE_MS = 10_000;

/** Whether `redis-server` is on PATH. */
export function redisServerInstalled(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One PING over a fresh socket: true when the server answers +PONG (not -LOADING, not a refused connection). */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let reply = "";
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}

export class RedisServer {
  readonly port: number;
  readonly dir: string;
  #child: ChildProcess | undefined;
  #output = "";

  private constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), mkdtempSync(join(tmpdir(), "acp-remote-redis-")));
    try {
      await server.restart();
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on its port and folder, and resolves once it answers PING. */
  async restart(): Promise<void> {
    if (this.#child) throw new Error("redis-server runs already");
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""];
    const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    const keep = (chunk: Buffer): void => {
      this.#output = (this.#output + chunk.toString()).slice(-4_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const deadline = Date.now() + START_DEADLINE_MS;
    while (!(await pong(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`redis-server did not start on port ${this.port}:\n${this.#output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Kills the server at once (SIGKILL: a crash, nothing flushed beyond what is fsynced) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await exited;
    }
  }

  /** The server stops answering, its connections open (SIGSTOP), until `resume`. */
  pause(): void {
    this.#child?.kill("SIGSTOP");
  }

  resume(): void {
    this.#child?.kill("SIGCONT");
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
