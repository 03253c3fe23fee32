// Copies the embedded store's write-ahead log into the database file on a
// worker thread, so that the event loop never waits for it.
//
// With SQLite's automatic checkpoint, the commit that takes the log past 1,000
// pages copies it back and syncs the file, inside that commit: 14–17 ms on this
// kind of disk, against 0.4 ms for a commit of 200 journal entries. That
// commit ran on the event loop every few hundred milliseconds under load, so
// every request that met it waited (the latency p99 of the relay and the
// claims and finishes of deferred jobs). Here the connection the sidecar
// writes with never checkpoints; a second connection, on a worker thread of its
// own, runs a PASSIVE checkpoint (which never blocks the writer) every
// DEFAULT_STORE_CHECKPOINT_MS. Commits stay as durable as before
// (synchronous = NORMAL in WAL mode: safe against a crash of the process,
// the database consistent after a power loss).
//
// Should the worker fail, the writing connection checkpoints by itself again:
// the log never grows without bound.
import { Worker } from "node:worker_threads";
import type { Database } from "../store.ts";
import { DEFAULT_STORE_CHECKPOINT_MS, DEFAULT_STORE_WAL_LIMIT_BYTES } from "../limits.ts";
import type { Log } from "../../../protocol/log-line.ts";

/** SQLite's own automatic checkpoint, in pages, restored when the worker is not there. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;

// Plain CommonJS, evaluated by the worker: the sidecar ships as one bundle,
// and a worker file of its own would be one more file to ship and find.
const WORKER_SOURCE = `
const { DatabaseSync } = require("node:sqlite");
const { parentPort, workerData } = require("node:worker_threads");
const db = new DatabaseSync(workerData.file);
db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_size_limit = " + workerData.walLimitBytes);
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const timer = setInterval(() => {
  try { checkpoint.get(); } catch (error) { parentPort.postMessage({ failed: String(error && error.message || error) }); }
}, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  try { checkpoint.get(); } finally { db.close(); }
  parentPort.postMessage({ stopped: true });
});
parentPort.postMessage({ started: true });
`;

export interface CheckpointerOptions {
  intervalMs?: number;
  walLimitBytes?: number;
  /** A failure of the worker, after which the writing connection checkpoints by itself. */
  log?: Log;
}

export class WalCheckpointer {
  readonly #db: Database;
  readonly #worker: Worker;
  readonly #log: Log;
  #stopped = false;
  #exited = false;
  #fellBack = false;

  constructor(db: Database, file: string, options: CheckpointerOptions = {}) {
    this.#db = db;
    this.#log = options.log ?? (() => undefined);
    const walLimitBytes = options.walLimitBytes ?? DEFAULT_STORE_WAL_LIMIT_BYTES;
    db.exec(`PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${Math.floor(walLimitBytes)}`);
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, intervalMs: options.intervalMs ?? DEFAULT_STORE_CHECKPOINT_MS, walLimitBytes: Math.floor(walLimitBytes) },
      // The store's own thread: no stdin, and nothing of the sidecar's argv or flags.
      stdin: false,
      argv: [],
      execArgv: [],
    });
    // The sidecar's lifetime is not the worker's to decide.
    this.#worker.unref();
    this.#worker.on("message", (message: { failed?: string }) => {
      if (message.failed !== undefined) this.#fallBack(`a checkpoint failed: ${message.failed}`);
    });
    this.#worker.on("error", (error) => this.#fallBack(error.message));
    this.#worker.on("exit", (code) => {
      this.#exited = true;
      if (!this.#stopped) this.#fallBack(`the worker exited (${code})`);
    });
  }

  /** Checkpoints once more and ends the worker; the database stays open. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#exited) return;
    const done = new Promise<void>((resolve) => {
      this.#worker.on("message", (message: { stopped?: boolean }) => {
        if (message.stopped) resolve();
      });
      this.#worker.once("exit", () => resolve());
    });
    this.#worker.postMessage("stop");
    await done;
    await this.#worker.terminate();
  }

  #fallBack(reason: string): void {
    if (this.#fellBack || !this.#db.isOpen) return;
    this.#fellBack = true;
    this.#log(`store: the checkpoint thread stopped (${reason}); the sidecar checkpoints by itself`, "warn");
    this.#db.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    if (!this.#stopped) void this.#worker.terminate();
  }
}
