// The durable job queue against a real SQLite file, one case per row of the
// spec's "States and transitions" table, plus the rows the design adds
// (failure, restart, cancel, concurrency per backend). Jobs are run by a
// function the test finishes by hand, so every transition is observable.
import { describe, it, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { openStore, type Database } from "../../sidecar/store/store.ts";
import { SqliteJobStore } from "../../sidecar/store/sqlite/jobs.ts";
import { JobQueue, TooManyJobsError, type Job, type JobOutcome, type JobState } from "../../sidecar/v1/jobs.ts";
import { Slots } from "../../sidecar/v1/slots.ts";
import { ManualClock } from "./harness.ts";

const DAY_MS = 24 * 60 * 60_000;
const OWNER = "owner-a";

interface Gate {
  job: Job;
  signal: AbortSignal;
  finish(outcome: JobOutcome): void;
  fail(error: unknown): void;
}

const completion = (text: string): JobOutcome => ({ status: 200, body: { object: "chat.completion", text } });

/** A queue whose jobs wait until the test finishes them. */
class Fixture {
  readonly dir = mkdtempSync(join(tmpdir(), "acp-remote-jobs-"));
  readonly file = join(this.dir, "store.sqlite");
  readonly clock = new ManualClock();
  readonly started: Gate[] = [];
  readonly states = new Map<string, JobState | "deleted">();
  readonly #waiters = new Set<() => void>();
  readonly #open: Array<{ db: Database; queue: JobQueue }> = [];

  open(options: { maxAttempts?: number; perBackend?: number; maxPending?: number } = {}): JobQueue {
    const db = openStore(this.file);
    const queue = new JobQueue({
      store: new SqliteJobStore(db, { clock: this.clock.read, ttlMs: DAY_MS }),
      slots: new Slots(options.perBackend ?? 4),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      ...(options.maxPending === undefined ? {} : { maxPendingPerOwner: options.maxPending }),
      run: (job, signal) =>
        new Promise<JobOutcome>((resolve, reject) => {
          this.started.push({ job, signal, finish: resolve, fail: reject });
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          this.#notify();
        }),
      onChange: (id, state) => {
        this.states.set(id, state);
        this.#notify();
      },
    });
    this.#open.push({ db, queue });
    return queue;
  }

  #notify(): void {
    for (const w of [...this.#waiters]) w();
  }

  until(predicate: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (predicate()) {
          this.#waiters.delete(check);
          resolve();
        }
      };
      this.#waiters.add(check);
      check();
    });
  }

  gate(id: string): Promise<Gate> {
    return this.until(() => this.started.some((g) => g.job.id === id)).then(() => this.started.filter((g) => g.job.id === id).at(-1)!);
  }

  /** A job of OWNER's on `queue`, finished with a completion saying `text`, once the queue holds it done. */
  async doneJob(queue: JobQueue, text: string): Promise<string> {
    const id = await queue.submit(OWNER, "agent:a", "a", {});
    (await this.gate(id)).finish(completion(text));
    await this.until(() => this.states.get(id) === "done");
    return id;
  }

  async close(): Promise<void> {
    for (const { db, queue } of this.#open) {
      await queue.close();
      db.close();
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Each test's fixture: made anew before it, closed after it. */
let f: Fixture;
beforeEach(() => {
  f = new Fixture();
});
afterEach(() => f.close());

describe("job queue: spec table 'States and transitions'", () => {
  it("none → POST deferred → pending: a request_id in UUID format", async () => {
    const queue = f.open();
    const id = await queue.submit(OWNER, "agent:a", "a", { n: 1 });
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(["pending", "running"].includes(await queue.state(OWNER, id) ?? ""));
  });

  it("pending → GET, result not ready → pending (202)", async () => {
    const queue = f.open();
    const id = await queue.submit(OWNER, "agent:a", "a", {});
    await f.gate(id);
    assert.deepEqual(await queue.take(OWNER, id), { kind: "pending" });
    assert.deepEqual(await queue.take(OWNER, id), { kind: "pending" });
  });

  it("pending → processing completes → ready; ready → GET within 24 hours → retrieved (200 once), then 404", async () => {
    const queue = f.open();
    const id = await f.doneJob(queue, "hi");
    assert.equal(await queue.state(OWNER, id), "done");
    assert.deepEqual(await queue.take(OWNER, id), { kind: "ready", status: 200, body: { object: "chat.completion", text: "hi" } });
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
  });

  it("ready → 24 hours pass → discarded (404), by the injected clock", async () => {
    const queue = f.open();
    const id = await f.doneJob(queue, "late");
    f.clock.advance(DAY_MS - 1);
    assert.equal(await queue.state(OWNER, id), "done", "still there one millisecond before 24 hours");
    f.clock.advance(1);
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
    assert.equal(await queue.sweep(), 1, "the sweep deletes the row");
    assert.equal(f.states.get(id), "deleted");
  });

  it("pending for 24 hours → discarded too, and its run is aborted", async () => {
    const queue = f.open();
    const id = await queue.submit(OWNER, "agent:a", "a", {});
    const gate = await f.gate(id);
    f.clock.advance(DAY_MS);
    assert.equal(await queue.sweep(), 1);
    assert.equal(gate.signal.aborted, true);
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
  });

  it("another key's request_id → gone (404), and it stays retrievable by its owner", async () => {
    const queue = f.open();
    const id = await f.doneJob(queue, "mine");
    assert.deepEqual(await queue.take("owner-b", id), { kind: "gone" });
    assert.equal((await queue.take(OWNER, id)).kind, "ready");
  });
});

describe("job queue: failures (design: decision 2)", () => {
  it("a job that fails answers once with its error status and body, then 404", async () => {
    const queue = f.open();
    const id = await queue.submit(OWNER, "agent:a", "a", {});
    (await f.gate(id)).fail(new Error("the agent exited"));
    await f.until(() => f.states.get(id) === "failed");
    const got = await queue.take(OWNER, id);
    assert.equal(got.kind, "ready");
    assert.equal(got.kind === "ready" && got.status, 500);
    assert.deepEqual(got.kind === "ready" && got.body, {
      error: { message: "the agent exited", type: "server_error", param: null, code: "internal_error" },
    });
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
  });

  it("a key with too many jobs waiting is refused", async () => {
    const queue = f.open({ maxPending: 2, perBackend: 1 });
    await queue.submit(OWNER, "agent:a", "a", {});
    await queue.submit(OWNER, "agent:a", "a", {});
    await assert.rejects(queue.submit(OWNER, "agent:a", "a", {}), TooManyJobsError);
    await queue.submit("owner-b", "agent:a", "a", {});
  });
});

describe("job queue: restart (design: decision 3)", () => {
  it("a job running when the sidecar died is run again on start", async () => {
    const first = f.open();
    const id = await first.submit(OWNER, "agent:a", "a", { prompt: "p" });
    await f.gate(id);
    // A second queue on the same file is what a restarted sidecar sees: the row still says running.
    const second = f.open();
    const rerun = await f.until(() => f.started.filter((g) => g.job.id === id).length === 2).then(() => f.started.at(-1)!);
    assert.equal(rerun.job.attempts, 2);
    assert.equal(rerun.job.request, JSON.stringify({ prompt: "p" }));
    rerun.finish(completion("again"));
    await f.until(() => f.states.get(id) === "done");
    assert.equal((await second.take(OWNER, id)).kind, "ready");
  });

  it("a job cut off maxAttempts times is reported failed (500, code interrupted) instead of run again", async () => {
    const first = f.open({ maxAttempts: 1 });
    const id = await first.submit(OWNER, "agent:a", "a", {});
    await f.gate(id);
    const second = f.open({ maxAttempts: 1 });
    const got = await second.take(OWNER, id);
    assert.equal(got.kind === "ready" && got.status, 500);
    assert.equal(got.kind === "ready" && (got.body as { error: { code: string } }).error.code, "interrupted");
    assert.equal(f.started.length, 1, "not started again");
  });

  it("a graceful close puts a running job back to pending without counting the attempt", async () => {
    const first = f.open();
    const id = await first.submit(OWNER, "agent:a", "a", {});
    const gate = await f.gate(id);
    await first.close();
    assert.equal(gate.signal.aborted, true);
    f.open();
    const rerun = await f.until(() => f.started.length === 2).then(() => f.started[1]!);
    assert.equal(rerun.job.attempts, 1);
  });
});

describe("job queue: beyond the spec", () => {
  it("DELETE of a running job aborts it and discards it", async () => {
    const queue = f.open();
    const id = await queue.submit(OWNER, "agent:a", "a", {});
    const gate = await f.gate(id);
    assert.equal(await queue.cancel(OWNER, id), true);
    assert.equal(gate.signal.aborted, true);
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
    assert.equal(await queue.cancel(OWNER, id), false);
  });

  it("at most the backend's concurrency runs at once; other backends are not held up", async () => {
    const queue = f.open({ perBackend: 2 });
    const a: string[] = [];
    for (let i = 0; i < 5; i++) a.push(await queue.submit(OWNER, "agent:a", "a", {}));
    const b = await queue.submit(OWNER, "agent:b", "b", {});
    await f.gate(b);
    await f.until(() => f.started.length === 3);
    const running = () => f.started.filter((g) => g.job.backend === "agent:a" && !f.states.get(g.job.id)?.match(/done|deleted/));
    assert.equal(running().length, 2);
    // Finishing them one by one lets the next in, oldest first.
    for (let i = 0; i < a.length; i++) {
      const gate = await f.gate(a[i]!);
      gate.finish(completion(String(i)));
      await f.until(() => f.states.get(a[i]!) === "done");
    }
    assert.deepEqual(
      f.started.filter((g) => g.job.backend === "agent:a").map((g) => g.job.id),
      a,
    );
  });
});

describe("job queue: exactly once under concurrency (spec: Limits 1)", () => {
  it("8 threads with their own connections take one ready result at the same instant: exactly one gets it", async () => {
    const queue = f.open();
    const id = await f.doneJob(queue, "once");
    const start = new Int32Array(new SharedArrayBuffer(4));
    const workers = Array.from({ length: 8 }, () =>
      new Worker(new URL("./take-worker.ts", import.meta.url), { workerData: { file: f.file, id, owner: OWNER, now: f.clock.now, start } }),
    );
    const messages = workers.map((w) => {
      const got: unknown[] = [];
      const waiters: Array<(v: unknown) => void> = [];
      w.on("message", (m: unknown) => (waiters.length > 0 ? waiters.shift()!(m) : got.push(m)));
      w.on("error", (e) => assert.fail(e));
      return () => new Promise<unknown>((resolve) => (got.length > 0 ? resolve(got.shift()) : waiters.push(resolve)));
    });
    // Every thread has opened the store and waits on the same word; then all go.
    assert.deepEqual(await Promise.all(messages.map((next) => next())), workers.map(() => "ready"));
    Atomics.store(start, 0, 1);
    Atomics.notify(start, 0);
    const results = messages.map((next) => next() as Promise<number>);
    const statuses = await Promise.all(results);
    await Promise.all(workers.map((w) => w.terminate()));
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(",")}`);
    assert.deepEqual(await queue.take(OWNER, id), { kind: "gone" });
  });
});
