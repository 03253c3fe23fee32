// While a deferred figure is measured, every slot of the setup's backend is
// held by a job that sleeps, so no job runs: what is measured is the request
// path and the store, not the agent (one-shot sessions are agent work, which
// more machines do in parallel). It is also the steady state of a service
// under more load than its agents can take: the queue grows, and a
// submission never finds a free slot to claim. Released by cancelling them.
import { DEFAULT_V1_CONCURRENCY_PER_BACKEND } from "../sidecar/limits.ts";
import { type H2Clients, POLL_PATH, SUBMIT_PATH, submitBody } from "./cluster-load.ts";
import type { JobCounts } from "./cluster-setups.ts";

/** How long a slot-holding job sleeps: longer than any run, in milliseconds (it is cancelled before). */
const HOLD_MS = 3_600_000;
/** Pause between two looks at the store, in milliseconds. */
const LOOK_MS = 50;

/** Waits until no job is pending or running, at most `timeoutMs`; returns how many still are. */
export async function waitIdle(jobs: JobCounts, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const active = await jobs.active();
    if (active === 0 || performance.now() > deadline) return active;
    await new Promise((r) => setTimeout(r, LOOK_MS));
  }
}

/**
 * Submits a sleeping job for every slot of `nodes` nodes (spread over
 * `targets`) and waits until all run: nodes other than the one asked claim
 * queued jobs on their next scan (DEFAULT_CLUSTER_JOB_SCAN_MS). Their ids go
 * to `ids` as they are submitted, so that the caller can cancel them whatever happens.
 */
export async function holdSlots(clients: H2Clients, targets: readonly string[], jobs: JobCounts, nodes: number, timeoutMs: number, ids: string[]): Promise<void> {
  const count = nodes * DEFAULT_V1_CONCURRENCY_PER_BACKEND;
  for (let i = 0; i < count; i++) {
    const answer = await clients.request(targets[i % targets.length] as string, "POST", SUBMIT_PATH, submitBody(`slow ${HOLD_MS}`));
    if (answer.status !== 200) throw new Error(`a slot-holding job was refused: HTTP ${answer.status} ${answer.body}`);
    ids.push((JSON.parse(answer.body) as { request_id: string }).request_id);
  }
  const deadline = performance.now() + timeoutMs;
  let running = 0;
  while ((running = await jobs.running()) < count) {
    if (performance.now() > deadline) throw new Error(`${running} of ${count} slot-holding jobs run after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, LOOK_MS));
  }
}

/**
 * Cancels jobs (DELETE), each on the URL `where(id)` names; returns the
 * answers that were not 200. On a shared store the DELETE must reach the
 * node that runs the job: another node deletes it from the store and answers
 * 200, but the running job goes on, holding its slot, until it ends by itself.
 */
export async function cancelJobs(clients: H2Clients, where: (id: string) => Promise<string>, ids: readonly string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const id of ids) {
    const answer = await clients.request(await where(id), "DELETE", `${POLL_PATH}${id}`).catch((error: unknown) => ({ status: 0, body: String(error) }));
    if (answer.status !== 200) failed.push(`cancel HTTP ${answer.status}`);
  }
  return failed;
}
