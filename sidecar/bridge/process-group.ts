// The agent's process group: spawned `detached`, the agent leads a group of
// its own, so that signals reach the children it started too (kill(-pid)).
// Stopping is bounded: SIGTERM, SIGKILL after a grace period, then a bounded
// wait for the exit, so that an agent that ignores stdin EOF and SIGTERM (or
// left its group) cannot hold up a shutdown.
import type { ChildProcess } from "node:child_process";
import { statSync } from "node:fs";

/** Sends `signal` to the child's process group, and to the child itself should it have left the group. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is gone already (or the child moved to another one).
  }
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, signal);
    } catch {
      // ESRCH: it has exited.
    }
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves when the child has exited (at once if it has). */
export function waitForExit(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Resolves when the child has exited or after `ms`, whichever comes first; true when it exited. */
async function exitWithin(child: ChildProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([waitForExit(child).then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

export interface StopTimes {
  /** Time between SIGTERM and SIGKILL, in milliseconds. */
  graceMs: number;
  /** Time to wait for the exit after SIGKILL, in milliseconds. */
  killWaitMs: number;
}

/**
 * Ends the child and its group: stdin closed and SIGTERM, SIGKILL after
 * `graceMs`, then at most `killWaitMs` more. Resolves true when the child
 * exited, false when it still had not (a process stuck in the kernel).
 */
export async function stopProcessGroup(child: ChildProcess, times: StopTimes): Promise<boolean> {
  if (hasExited(child)) return true;
  child.stdin?.end();
  signalGroup(child, "SIGTERM");
  if (await exitWithin(child, times.graceMs)) return true;
  signalGroup(child, "SIGKILL");
  return exitWithin(child, times.killWaitMs);
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
