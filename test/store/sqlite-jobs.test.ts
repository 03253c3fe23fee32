// The embedded job store under load (sidecar/store/sqlite/jobs.ts): the
// writes of one event-loop turn (submissions, claims, finished jobs,
// retrievals) go to disk in one transaction and each resolves only once its
// row is committed; a poll of a job this process knows
// to be pending or running runs no statement; the one index every submission
// maintains is the one the claim needs. Real SQLite files, a second
// connection to look at what is on disk.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { SqliteJobStore } from "../../sidecar/store/sqlite/jobs.ts";
import { type Database, openStore } from "../../sidecar/store/store.ts";
import { ManualClock } from "./harness.ts";

const TTL_MS = 24 * 60 * 60_000;
const OWNER = "person-1";
const REQUEST = { model: "demo", messages: [{ role: "user", content: "hello" }], deferred: true };

/** Counts the write transactions begun and the statements run on `db` (a real database; the calls go through). */
function counted(db: Database): { transactions: () => number; statements: () => number } {
  let transactions = 0;
  let statements = 0;
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    if (/^\s*BEGIN/i.test(sql)) transactions++;
    return exec(sql);
  };
  const prepare = db.prepare.bind(db);
  db.prepare = (sql: string) => {
    const statement = prepare(sql);
    for (const method of ["run", "get", "all", "iterate"] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        statements++;
        return original(...args);
      };
    }
    return statement as StatementSync;
  };
  return { transactions: () => transactions, statements: () => statements };
}

describe("the embedded job store under load", () => {
  let dir: string;
  let db: Database;
  let other: DatabaseSync;
  const clock = new ManualClock();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-sqlite-jobs-"));
    db = openStore(join(dir, "store.sqlite"));
    other = new DatabaseSync(join(dir, "store.sqlite"));
  });
  afterEach(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowsOnDisk = (): number => Number((other.prepare("SELECT count(*) AS n FROM v1_jobs").get() as { n: number }).n);

  it("the submissions of one event-loop turn are one transaction; each resolves once its row is on disk", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const count = counted(db);
    const onDiskWhenResolved: number[] = [];
    const submitted = Array.from({ length: 50 }, () =>
      jobs.insert(OWNER, "backend-1", "demo", REQUEST, 1_000).then((id) => {
        onDiskWhenResolved.push(rowsOnDisk());
        return id;
      }),
    );
    assert.equal(rowsOnDisk(), 0, "nothing is written while the turn submits");
    const ids = await Promise.all(submitted);
    assert.equal(new Set(ids).size, 50);
    assert.equal(count.transactions(), 1);
    assert.deepEqual(onDiskWhenResolved, Array.from({ length: 50 }, () => 50), "every submission resolved after the commit");
    // A lone write of the next turn is committed on its own, without a transaction around it.
    await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 1_000);
    assert.equal(count.transactions(), 1);
    assert.equal(rowsOnDisk(), 51);
  });

  it("the claims, the finished jobs and the retrievals of one turn are one transaction each; each resolves once on disk", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const ids = (await Promise.all(Array.from({ length: 20 }, () => jobs.insert(OWNER, "backend-1", "demo", REQUEST, 1_000)))) as string[];
    const count = counted(db);
    const stateOnDisk = (id: string): string | undefined => (other.prepare("SELECT state FROM v1_jobs WHERE id = ?").get(id) as { state?: string } | undefined)?.state;

    const claimed = await Promise.all(ids.map(() => jobs.claim("backend-1").then((job) => ({ job, onDisk: stateOnDisk(job?.id ?? "") }))));
    assert.deepEqual(claimed.map((c) => c.job?.id).sort(), [...ids].sort(), "each job claimed once");
    assert.ok(claimed.every((c) => c.onDisk === "running"), "every claim resolved after the commit");
    assert.equal(count.transactions(), 1);

    const finished = await Promise.all(ids.map((id, i) => jobs.finish(id, "done", 200, { answer: i }).then((ok) => ok && stateOnDisk(id) === "done")));
    assert.ok(finished.every(Boolean), "every finish resolved after the commit");
    assert.equal(count.transactions(), 2);

    // Each retrieval once, even with two polls of every job in the same turn.
    const taken = await Promise.all([...ids, ...ids].map((id) => jobs.take(OWNER, id).then((got) => ({ got, onDisk: stateOnDisk(id) }))));
    assert.equal(taken.filter((t) => t.got.kind === "ready").length, 20);
    assert.equal(taken.filter((t) => t.got.kind === "gone").length, 20);
    assert.ok(taken.every((t) => t.onDisk === undefined), "every retrieval resolved after its row was deleted on disk");
    assert.deepEqual(ids.map((id) => taken.find((t) => t.got.kind === "ready" && (t.got.body as { answer: number }).answer === ids.indexOf(id)) !== undefined), ids.map(() => true));
    assert.equal(count.transactions(), 3);
    assert.equal(rowsOnDisk(), 0);
  });

  it("the per-owner bound counts the turn's submissions not yet written", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const results = await Promise.all(Array.from({ length: 5 }, () => jobs.insert(OWNER, "backend-1", "demo", REQUEST, 3)));
    assert.equal(results.filter((id) => id !== undefined).length, 3);
    assert.equal(rowsOnDisk(), 3);
  });

  it("a poll of a job known to be pending or running runs no statement; a finished job is taken once from the rows", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const id = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    const count = counted(db);
    assert.deepEqual(await jobs.take(OWNER, id), { kind: "pending" });
    assert.equal(await jobs.state(OWNER, id), "pending");
    assert.equal(count.statements(), 0, "answered from memory");
    // Another person's poll of the id is not answered from what this person's job is.
    assert.deepEqual(await jobs.take("someone-else", id), { kind: "gone" });

    const job = await jobs.claim("backend-1");
    assert.equal(job?.id, id);
    const before = count.statements();
    assert.deepEqual(await jobs.take(OWNER, id), { kind: "pending" }, "202 while it runs");
    assert.equal(await jobs.state(OWNER, id), "running");
    assert.equal(count.statements(), before);

    assert.equal(await jobs.finish(id, "done", 200, { answer: 42 }), true);
    assert.deepEqual(await jobs.take(OWNER, id), { kind: "ready", status: 200, body: { answer: 42 } });
    assert.deepEqual(await jobs.take(OWNER, id), { kind: "gone" }, "exactly once");
  });

  it("a poll of a job whose row this process deleted (retrieved, cancelled) runs no statement and answers gone, whoever asks", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const retrieved = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    await jobs.claim("backend-1");
    await jobs.finish(retrieved, "done", 200, { answer: 1 });
    assert.equal((await jobs.take(OWNER, retrieved)).kind, "ready");
    const cancelled = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    assert.ok(await jobs.delete(OWNER, cancelled));
    const count = counted(db);
    // Another job store of this process on the same database knows it too (its statements are all counted).
    const other = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    for (const store of [jobs, other]) {
      for (const id of [retrieved, cancelled]) {
        assert.deepEqual(await store.take(OWNER, id), { kind: "gone" });
        assert.deepEqual(await store.take("someone-else", id), { kind: "gone" });
        assert.equal(await store.state(OWNER, id), undefined);
        assert.equal(await store.delete(OWNER, id), undefined);
      }
    }
    assert.equal(count.statements(), 0, "answered from memory");
    // A job this process never saw still goes to the rows.
    assert.deepEqual(await other.take(OWNER, "never-submitted"), { kind: "gone" });
    assert.equal(count.statements(), 1);
  });

  it("a job known to be pending is gone once deleted, once expired, and read from the rows again after recover", async () => {
    const jobs = new SqliteJobStore(db, { clock: clock.read, ttlMs: TTL_MS });
    const deleted = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    assert.ok(await jobs.delete(OWNER, deleted));
    assert.deepEqual(await jobs.take(OWNER, deleted), { kind: "gone" });

    const expiring = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    clock.advance(TTL_MS + 1);
    assert.deepEqual(await jobs.take(OWNER, expiring), { kind: "gone" }, "past the TTL, even before the sweep");
    await jobs.expire();
    assert.deepEqual(await jobs.take(OWNER, expiring), { kind: "gone" });

    // A crash left a job running: recover fails it (it was started as often as allowed).
    const cut = (await jobs.insert(OWNER, "backend-1", "demo", REQUEST, 10)) as string;
    await jobs.claim("backend-1");
    await jobs.recover(1, { error: { message: "interrupted" } });
    assert.equal(await jobs.state(OWNER, cut), "failed");
    assert.deepEqual(await jobs.take(OWNER, cut), { kind: "ready", status: 500, body: { error: { message: "interrupted" } } });
  });

  it("every submission maintains one index besides the id, the one the claim uses; a store made before drops the others", async () => {
    // A file of an earlier acp-remote, with the indexes it kept then; opening it migrates it.
    const earlier = join(dir, "earlier.sqlite");
    const raw = new DatabaseSync(earlier);
    raw.exec(`CREATE TABLE v1_jobs (
      id TEXT PRIMARY KEY, owner TEXT NOT NULL, backend TEXT NOT NULL, model TEXT NOT NULL, request TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')), created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, status INTEGER, result TEXT) STRICT;
      CREATE INDEX v1_jobs_by_state ON v1_jobs (state, created_at);
      CREATE INDEX v1_jobs_by_owner ON v1_jobs (owner, state);`);
    raw.close();
    const migrated = openStore(earlier);
    try {
      new SqliteJobStore(migrated, { clock: clock.read, ttlMs: TTL_MS });
      const indexes = (migrated.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'v1_jobs' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
      assert.deepEqual(indexes, ["sqlite_autoindex_v1_jobs_1", "v1_jobs_by_backend"]);
    } finally {
      migrated.close();
    }
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM v1_jobs WHERE state = 'pending' AND backend = ? AND created_at > ? ORDER BY created_at, rowid LIMIT 1",
      )
      .all("backend-1", 0) as Array<{ detail: string }>;
    assert.ok(plan.some((step) => step.detail.includes("v1_jobs_by_backend")), JSON.stringify(plan));
  });
});
