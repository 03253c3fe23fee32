// A long-running program a test starts (redis-server, haproxy, nginx, a
// sidecar): spawned with its output kept, ready when its output says so or a
// probe succeeds (never after a fixed sleep), stopped with SIGTERM and waited
// for, killed with SIGKILL, started again with the same command. Whatever is
// still running when the test process exits is killed on the way out, so a
// failed test leaves no process behind.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { accessSync, constants, rmSync } from "node:fs";
import net from "node:net";

const running = new Set<ManagedProcess>();
const folders = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const managed of running) managed.killNow();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });
}

/** A temporary folder removed when the test process exits, if nothing removed it before; call the result once it is removed. */
export function removeOnExit(dir: string): () => void {
  installExitHook();
  folders.add(dir);
  return () => folders.delete(dir);
}

export interface ProcessSpec {
  /** Names the program in errors. */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Runs in a process group of its own, and kill() ends the whole group: a
   * sidecar's agents die with it, as they would with its machine.
   */
  group?: boolean;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** When a start counts as ready: a line of output matching, or a probe that resolves true. */
export type Readiness = RegExp | (() => Promise<boolean>);

/** How long a program may take to become ready, in milliseconds. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
/** How long stop() waits after SIGTERM before it sends SIGKILL, in milliseconds. */
export const DEFAULT_STOP_TIMEOUT_MS = 30_000;
const PROBE_INTERVAL_MS = 25;

export class ManagedProcess {
  readonly spec: ProcessSpec;
  #child: ChildProcess | undefined;
  #exited: Promise<Exit> = Promise.resolve({ code: null, signal: null });
  #output = "";
  #listeners = new Set<() => void>();

  constructor(spec: ProcessSpec) {
    this.spec = spec;
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Everything it wrote on stdout and stderr, across its starts. */
  output(): string {
    return this.#output;
  }

  /** Resolves when the current run exits. */
  get exited(): Promise<Exit> {
    return this.#exited;
  }

  /** Starts the program and waits until `ready`; a program that exits first, or takes too long, fails the start. */
  async start(ready: Readiness, timeoutMs = DEFAULT_START_TIMEOUT_MS): Promise<void> {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    installExitHook();
    const from = this.#output.length;
    const child = spawn(this.spec.command, [...this.spec.args], {
      env: this.spec.env ?? process.env,
      cwd: this.spec.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      detached: this.spec.group === true,
    });
    this.#child = child;
    running.add(this);
    const append = (chunk: string): void => {
      this.#output += chunk;
      for (const listener of this.#listeners) listener();
    };
    child.stdout?.setEncoding("utf8").on("data", append);
    child.stderr?.setEncoding("utf8").on("data", append);
    const spawnFailed = once(child, "spawn").then(
      () => undefined,
      (error: Error) => error,
    );
    this.#exited = new Promise<Exit>((resolve) => {
      child.once("close", (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      });
      child.once("error", () => {
        running.delete(this);
        resolve({ code: null, signal: null });
      });
    });
    const failure = await spawnFailed;
    if (failure !== undefined) throw new Error(`${this.spec.name}: cannot run ${this.spec.command}: ${failure.message}`);
    const exitedEarly = this.#exited.then((exit) => {
      throw new Error(`${this.spec.name} exited (${exit.signal ?? exit.code}) before it was ready:\n${this.#output.slice(from)}`);
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.spec.name} not ready after ${timeoutMs} ms:\n${this.#output.slice(from)}`)), timeoutMs);
    });
    try {
      await Promise.race([typeof ready === "function" ? this.#probe(ready) : this.waitForOutput(ready, from), exitedEarly, late]);
    } catch (error) {
      await this.kill();
      throw error;
    } finally {
      clearTimeout(timer);
      exitedEarly.catch(() => {});
    }
  }

  async #probe(probe: () => Promise<boolean>): Promise<void> {
    while (this.running && !(await probe().catch(() => false))) {
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
  }

  /** Resolves once the output written since offset `from` matches `pattern`; returns the match. */
  waitForOutput(pattern: RegExp, from = 0): Promise<RegExpExecArray> {
    const test = (): RegExpExecArray | null => pattern.exec(this.#output.slice(from));
    const now = test();
    if (now !== null) return Promise.resolve(now);
    return new Promise((resolve) => {
      const check = (): void => {
        const match = test();
        if (match === null) return;
        this.#listeners.delete(check);
        resolve(match);
      };
      this.#listeners.add(check);
    });
  }

  /** SIGTERM, then waits for the exit; SIGKILL if it takes longer than `timeoutMs`. */
  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<Exit> {
    if (!this.running) return this.#exited;
    this.#child?.kill("SIGTERM");
    const timer = setTimeout(() => this.killNow(), timeoutMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL (to its group too when it has one), then waits for the exit. */
  async kill(): Promise<Exit> {
    this.killNow();
    return this.#exited;
  }

  /** SIGKILL without waiting; also what the exit hook does. */
  killNow(): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    if (this.spec.group === true) {
      // The group outlives its leader when the leader is gone first: kill it anyway.
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // No such group any more.
      }
    }
    if (this.running) this.#child?.kill("SIGKILL");
  }
}

/** A TCP port free on 127.0.0.1 right now (the kernel's pick). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts TCP connections on the port. */
export function accepts(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The absolute path of a program on PATH (or in the sbin folders Debian puts daemons in), or undefined. */
export function findProgram(name: string): string | undefined {
  const dirs = [...(process.env["PATH"] ?? "").split(":"), "/usr/sbin", "/sbin", "/usr/local/sbin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const path = `${dir}/${name}`;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
