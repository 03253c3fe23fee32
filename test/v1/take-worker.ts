// A thread with its own connection to the store that takes one deferred
// result through JobQueue.take when the main thread lets every worker go at once.
import { parentPort, workerData } from "node:worker_threads";
import { openStore } from "../../sidecar/store/store.ts";
import { SqliteJobStore } from "../../sidecar/store/sqlite/jobs.ts";
import { JobQueue } from "../../sidecar/v1/jobs.ts";
import { Slots } from "../../sidecar/v1/slots.ts";

const { file, id, owner, now, start } = workerData as { file: string; id: string; owner: string; now: number; start: Int32Array };
const db = openStore(file);
const queue = new JobQueue({
  store: new SqliteJobStore(db, { clock: () => now, ttlMs: 24 * 60 * 60_000 }),
  slots: new Slots(1),
  run: () => Promise.reject(new Error("not run here")),
});
parentPort!.postMessage("ready");
Atomics.wait(start, 0, 0);
const got = await queue.take(owner, id);
await queue.close();
db.close();
parentPort!.postMessage(got.kind === "ready" ? got.status : 0);
