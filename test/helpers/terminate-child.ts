// Ending a child process that may still be running: SIGTERM first, so it
// shuts down as it would under a service manager, then SIGKILL if it takes
// longer than a grace period, so a stuck child cannot hang the caller.
import type { ChildProcess } from "node:child_process";

/** How long a child may take to exit after SIGTERM before it gets SIGKILL, in milliseconds. */
export const DEFAULT_TERMINATE_GRACE_MS = 10_000;

/** Ends `child` and resolves once `exited` (its exit event) has; at once when it has already exited. */
export async function terminateChild(child: ChildProcess, exited: Promise<unknown>, graceMs = DEFAULT_TERMINATE_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(killer);
}
