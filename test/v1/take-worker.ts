// A thread with its own connection to the store that takes one deferred
// result through JobQueue.take when the main thread lets every worker go at once.
import { parentPort, workerData } from "node:worker_threads";
import { openStore } from "../../sidecar/store/store.ts";
import { JobQueue } from "../../sidecar/v1/jobs.ts";
import { Slots } from "../../sidecar/v1/slots.ts";

const { file, id, owner, now, start } = workerData as { file: string; id: string; owner: string; now: number; start: Int32Array };
const db = openStore(file);
const queue = new JobQueue({ db, slots: new Slots(1), clock: () => now, run: () => Promise.reject(new Error("not run here")) });
parentPort!.postMessage("ready");
Atomics.wait(start, 0, 0);
const got = queue.take(owner, id);
await queue.close();
db.close();
parentPort!.postMessage(got.kind === "ready" ? got.status : 0);
