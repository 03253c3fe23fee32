// Starts a server under test in its own process (server-child.ts) and talks
// to it: its URL, its RSS (and that of its agent processes), a clean stop.
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ChildReply, ServerSpec } from "./server-spec.ts";
import { specLabel } from "./server-spec.ts";

/** Time a server has to start (the TLS ones make a certificate first), in milliseconds. */
const START_TIMEOUT_MS = 30_000;
/** Time a server has to stop and write its profile before it is killed, in milliseconds. */
const STOP_TIMEOUT_MS = 10_000;

export interface ServerUnderTest {
  spec: ServerSpec;
  label: string;
  url: string;
  pid: number;
  /** RSS of the server process after a GC, in bytes. */
  rss(): Promise<number>;
  /** CPU time of the server process so far (user + system), in microseconds. */
  cpuMicros(): Promise<number>;
  /** The same, with its main thread's share (microseconds) and the major garbage collections so far. */
  cpuDetail(): Promise<CpuDetail>;
  /** RSS of the server's child processes (agents), in bytes; 0 when it has none. */
  childrenRss(): number;
  stop(): Promise<void>;
}

export interface CpuDetail {
  /** User + system time of the process, in microseconds. */
  total: number;
  /** Of it, the main thread's (NaN where Node cannot tell), in microseconds. */
  main: number;
  majorGcs: number;
}

export interface StartOptions {
  /** Folder for `--cpu-prof` output; no profile when absent. */
  profileDir?: string;
  /** Name of the profile file, without extension. */
  profileName?: string;
}

export async function startServer(spec: ServerSpec, options: StartOptions = {}): Promise<ServerUnderTest> {
  const label = specLabel(spec);
  const execArgv = ["--expose-gc", "--max-old-space-size=4096"];
  if (options.profileDir !== undefined) {
    mkdirSync(options.profileDir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${options.profileDir}`, `--cpu-prof-name=${options.profileName ?? label}.cpuprofile`);
  }
  const child: ChildProcess = fork(fileURLToPath(new URL("./server-child.ts", import.meta.url)), [JSON.stringify(spec)], {
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.on("message", (message: ChildReply) => {
      if (message.type === "ready") {
        clearTimeout(timer);
        resolve({ url: message.url });
      } else if (message.type === "error") {
        clearTimeout(timer);
        reject(new Error(`${label} failed to start: ${message.message}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with code ${code} before it was ready`));
    });
  }).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  const pid = child.pid ?? 0;
  return {
    spec,
    label,
    url: ready.url,
    pid,
    rss: () => ask(child, label, "rss").then((m) => m.rss),
    cpuMicros: () => ask(child, label, "cpu").then((m) => m.user + m.system),
    cpuDetail: () => ask(child, label, "cpu").then((m) => ({ total: m.user + m.system, main: m.mainThread, majorGcs: m.majorGcs })),
    childrenRss: () => childrenRss(pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: "stop" });
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Sends a command to the server child and waits for its reply of the same type. */
function ask<T extends "rss" | "cpu">(child: ChildProcess, label: string, type: T): Promise<Extract<ChildReply, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildReply): void => {
      if (message.type !== type) return;
      child.off("message", onMessage);
      resolve(message as Extract<ChildReply, { type: T }>);
    };
    child.on("message", onMessage);
    if (!child.send({ type })) {
      child.off("message", onMessage);
      reject(new Error(`${label} is gone`));
    }
  });
}

/** Sum of the RSS of a process's direct children, in bytes (Linux `ps`). */
function childrenRss(pid: number): number {
  try {
    const out = execFileSync("ps", ["-o", "rss=", "--ppid", String(pid)], { encoding: "utf8" });
    return out
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isFinite(n) && n > 0)
      .reduce((a, b) => a + b * 1024, 0);
  } catch {
    return 0;
  }
}
