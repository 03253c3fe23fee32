// Rows of the deferred jobs (spec: States and transitions; Limits 1 and 2).
import assert from "node:assert/strict";
import type { JobStore, NodeInfo, SharedStore } from "../../sidecar/store/shared-store.ts";
import { ManualClock, type Row } from "./harness.ts";

const TTL_MS = 24 * 60 * 60_000;
const OWNER = "person-1";
const REQUEST = { model: "demo", messages: [{ role: "user", content: "hello" }], deferred: true };
const INTERRUPTED = { error: { message: "stopped too often", type: "server_error", param: null, code: "interrupted" } };

function jobsOf(store: SharedStore, clock: ManualClock): JobStore {
  return store.jobs({ clock: clock.read, ttlMs: TTL_MS });
}

/**
 * Job stores of nodes A and B. The embedded store is one process, which
 * makes one job store (its per-owner counts are kept in that object), so
 * there node B's is node A's own.
 */
function twoNodes(a: SharedStore, b: SharedStore, clock: ManualClock): [JobStore, JobStore] {
  const ja = jobsOf(a, clock);
  return [ja, a === b ? ja : jobsOf(b, clock)];
}

function node(store: SharedStore): NodeInfo {
  return { id: store.nodeId, url: `http://${store.nodeId}.invalid`, startedAt: 1 };
}

export const jobRows: Row[] = [
  {
    name: "jobs: pending → claim → running → finish → done → taken once → gone",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const id = await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10);
      assert.ok(id);
      assert.equal(await jb.state(OWNER, id), "pending");
      assert.deepEqual(await jb.take(OWNER, id), { kind: "pending" });
      assert.deepEqual(await jb.pendingBackends(), ["backend-1"]);

      clock.advance(5);
      const job = await jb.claim("backend-1");
      assert.deepEqual(job, { id, owner: OWNER, backend: "backend-1", model: "demo", request: JSON.stringify(REQUEST), createdAt: clock.now - 5, attempts: 1 });
      assert.equal(await jb.claim("backend-1"), undefined, "claimed once");
      assert.equal(await ja.state(OWNER, id), "running");
      assert.deepEqual(await ja.take(OWNER, id), { kind: "pending" }, "202 while it runs");
      assert.deepEqual(await ja.pendingBackends(), []);

      const body = { id: "chatcmpl-1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" } }] };
      assert.equal(await jb.finish(id, "done", 200, body), true);
      assert.equal(await jb.finish(id, "failed", 500, {}), false, "finished once");
      assert.equal(await ja.state(OWNER, id), "done");
      assert.equal(await ja.state("person-2", id), undefined, "another person's job is unknown to them");
      assert.deepEqual(await ja.take("person-2", id), { kind: "gone" });
      assert.deepEqual(await ja.take(OWNER, id), { kind: "ready", status: 200, body });
      assert.deepEqual(await jb.take(OWNER, id), { kind: "gone" }, "the result is retrieved exactly once");
      assert.equal(await jb.state(OWNER, id), undefined);
      assert.deepEqual(await ja.take(OWNER, "unknown-id"), { kind: "gone" });
    },
  },
  {
    name: "jobs: 50 concurrent takes of one finished job across two nodes give exactly one ready",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const id = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      await ja.claim("backend-1");
      assert.equal(await ja.finish(id, "failed", 502, { error: { message: "upstream" } }), true);
      const takes = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? ja : jb).take(OWNER, id)));
      const ready = takes.filter((t) => t.kind === "ready");
      assert.equal(ready.length, 1);
      assert.deepEqual(ready[0], { kind: "ready", status: 502, body: { error: { message: "upstream" } } });
      assert.equal(takes.filter((t) => t.kind === "gone").length, 49);
    },
  },
  {
    name: "jobs: an owner's pending and running jobs stop at the max, checked and inserted atomically; finished or deleted ones free a place",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? ja : jb).insert(OWNER, "backend-1", "demo", REQUEST, 3)));
      const ids = racing.filter((id): id is string => id !== undefined);
      assert.equal(ids.length, 3, "ten racing inserts, three places");
      assert.equal(await ja.insert(OWNER, "backend-2", "demo", REQUEST, 3), undefined, "the max is per owner, whatever the backend");
      assert.ok(await jb.insert("person-2", "backend-1", "demo", REQUEST, 3), "another owner has places of their own");

      const removed = await jb.delete(OWNER, ids[0]!);
      assert.deepEqual(removed, { id: ids[0], owner: OWNER, active: true });
      assert.equal(await jb.delete(OWNER, ids[0]!), undefined, "deleted once");
      const fourth = await ja.insert(OWNER, "backend-1", "demo", REQUEST, 3);
      assert.ok(fourth, "a deleted job frees its place");
      assert.equal(await ja.insert(OWNER, "backend-1", "demo", REQUEST, 3), undefined);

      const running = (await ja.claim("backend-1"))!;
      assert.equal(running.owner, OWNER);
      assert.equal(await ja.insert(OWNER, "backend-1", "demo", REQUEST, 3), undefined, "a running job counts");
      await ja.finish(running.id, "done", 200, { ok: true });
      const fifth = await jb.insert(OWNER, "backend-1", "demo", REQUEST, 3);
      assert.ok(fifth, "a finished job frees its place");
      assert.deepEqual(await ja.delete(OWNER, running.id), { id: running.id, owner: OWNER, active: false });
      assert.equal(await ja.delete("person-2", fifth), undefined, "another person cannot delete it");
    },
  },
  {
    name: "jobs: expire (injected clock) deletes every job older than the TTL, active or finished, and nothing younger",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const pending = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      const running = (await ja.insert(OWNER, "backend-2", "demo", REQUEST, 10))!;
      const done = (await ja.insert(OWNER, "backend-3", "demo", REQUEST, 10))!;
      assert.equal((await jb.claim("backend-2"))?.id, running);
      assert.equal((await jb.claim("backend-3"))?.id, done);
      await jb.finish(done, "done", 200, { ok: true });
      clock.advance(1);
      const younger = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;

      clock.advance(TTL_MS - 2);
      assert.deepEqual(await jb.expire(), [], "nothing is older than the TTL yet");
      assert.equal(await ja.state(OWNER, pending), "pending");

      clock.advance(1);
      assert.equal(await ja.state(OWNER, done), undefined, "past the TTL a job is gone before the sweep");
      assert.deepEqual(await ja.take(OWNER, done), { kind: "gone" });
      assert.equal(await ja.claim("backend-1").then((j) => j?.id), younger, "an expired pending job is not started");
      const removed = await jb.expire();
      assert.deepEqual(
        removed.sort((x, y) => x.id.localeCompare(y.id)),
        [
          { id: pending, owner: OWNER, active: true },
          { id: running, owner: OWNER, active: true },
          { id: done, owner: OWNER, active: false },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      assert.deepEqual(await ja.expire(), []);
      assert.equal(await ja.state(OWNER, younger), "running");
      assert.ok(await ja.insert(OWNER, "backend-1", "demo", REQUEST, 2), "expired active jobs no longer count against the max");
      clock.advance(1);
      assert.deepEqual(await jb.expire(), [{ id: younger, owner: OWNER, active: true }]);
    },
  },
  {
    name: "jobs: claim takes the oldest pending job of its backend first (by creation, then by order stored); a released job keeps its place",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      clock.advance(10);
      const later = (await ja.insert(OWNER, "backend-1", "demo", { n: "later" }, 10))!;
      clock.advance(-10);
      const first = (await jb.insert(OWNER, "backend-1", "demo", { n: "first" }, 10))!;
      const second = (await ja.insert(OWNER, "backend-1", "demo", { n: "second" }, 10))!;
      const other = (await jb.insert(OWNER, "backend-2", "demo", { n: "other" }, 10))!;
      const claimedFirst = (await jb.claim("backend-1"))!;
      assert.equal(claimedFirst.id, first);
      await jb.release(first);
      assert.equal(await jb.state(OWNER, first), "pending");
      const again = (await ja.claim("backend-1"))!;
      assert.deepEqual([again.id, again.attempts], [first, 1], "released: back first in line, its attempt not counted");
      assert.equal((await jb.claim("backend-1"))?.id, second);
      assert.equal((await ja.claim("backend-1"))?.id, later);
      assert.equal(await jb.claim("backend-1"), undefined);
      assert.equal((await ja.claim("backend-2"))?.id, other);
    },
  },
  {
    name: "regression: after a restart, finishing a recovered job no longer frees a second place against the owner's max",
    async run({ open }) {
      const clock = new ManualClock();
      const earlier = jobsOf(await open("node-r"), clock);
      const first = (await earlier.insert(OWNER, "backend-1", "demo", REQUEST, 2))!;
      assert.ok(await earlier.insert(OWNER, "backend-1", "demo", REQUEST, 2));
      await earlier.claim("backend-1");
      // The process restarts under the same node id: a new job store on the same data.
      const restarted = jobsOf(await open("node-r"), clock);
      assert.equal(await restarted.recover(3, INTERRUPTED), 1);
      assert.equal((await restarted.claim("backend-1"))?.id, first);
      assert.equal(await restarted.finish(first, "done", 200, {}), true);
      assert.ok(await restarted.insert(OWNER, "backend-1", "demo", REQUEST, 2), "one job active: one place left");
      assert.equal(await restarted.insert(OWNER, "backend-1", "demo", REQUEST, 2), undefined, "two active: the max");
    },
  },
  {
    name: "jobs: a job claimed by one node cannot be finished or released by another",
    cluster: true,
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const id = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      await ja.claim("backend-1");
      assert.equal(await jb.finish(id, "done", 200, { from: "b" }), false);
      await jb.release(id);
      assert.equal(await jb.state(OWNER, id), "running");
      assert.equal(await ja.finish(id, "done", 200, { from: "a" }), true);
      assert.deepEqual(await jb.take(OWNER, id), { kind: "ready", status: 200, body: { from: "a" } });
    },
  },
  {
    name: "jobs: recover puts a dead node's running job back to pending, its attempts kept",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      await b.nodes.heartbeat(node(b), 60_000);
      const id = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      assert.equal((await jb.claim("backend-1"))?.attempts, 1);
      await b.nodes.leave(b.nodeId);
      assert.equal(await ja.recover(3, INTERRUPTED), 1);
      assert.equal(await ja.state(OWNER, id), "pending");
      assert.deepEqual(await ja.pendingBackends(), ["backend-1"]);
      const again = (await ja.claim("backend-1"))!;
      assert.deepEqual([again.id, again.attempts], [id, 2]);
    },
  },
  {
    name: "jobs: recover fails a dead node's job once started maxAttempts times, with the given body (500)",
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const id = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      for (const attempt of [1, 2]) {
        await b.nodes.heartbeat(node(b), 60_000);
        assert.equal((await jb.claim("backend-1"))?.attempts, attempt);
        await b.nodes.leave(b.nodeId);
        assert.equal(await ja.recover(2, INTERRUPTED), attempt === 1 ? 1 : 0);
      }
      assert.equal(await ja.state(OWNER, id), "failed");
      assert.ok(await ja.insert(OWNER, "backend-1", "demo", REQUEST, 1), "a failed job no longer counts against the max");
      assert.deepEqual(await jb.take(OWNER, id), { kind: "ready", status: 500, body: INTERRUPTED });
    },
  },
  {
    name: "jobs: recover leaves a live node's running job alone, and takes it back once its heartbeat runs out",
    cluster: true,
    async run({ a, b }) {
      const clock = new ManualClock();
      const [ja, jb] = twoNodes(a, b, clock);
      const id = (await ja.insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      await b.nodes.heartbeat(node(b), 1_000);
      await jb.claim("backend-1");
      assert.equal(await ja.recover(3, INTERRUPTED), 0);
      assert.equal(await jb.recover(3, INTERRUPTED), 0, "nor does its own node take it back");
      assert.equal(await ja.state(OWNER, id), "running");
      const deadline = Date.now() + 5_000;
      while ((await a.nodes.alive()).some((n) => n.id === b.nodeId)) {
        assert.ok(Date.now() < deadline, "the heartbeat runs out");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await ja.recover(3, INTERRUPTED), 1);
      assert.equal(await ja.state(OWNER, id), "pending");
    },
  },
  {
    name: "jobs: a running job of an earlier process of this node (restarted under the same id, heartbeat alive) is recovered",
    async run({ a, open }) {
      const clock = new ManualClock();
      const earlier = await open("node-r");
      await earlier.nodes.heartbeat(node(earlier), 60_000);
      const jEarlier = jobsOf(earlier, clock);
      const id = (await jobsOf(a, clock).insert(OWNER, "backend-1", "demo", REQUEST, 10))!;
      await jEarlier.claim("backend-1");
      const restarted = await open("node-r");
      await restarted.nodes.heartbeat(node(restarted), 60_000);
      const jRestarted = jobsOf(restarted, clock);
      assert.equal(await jRestarted.recover(3, INTERRUPTED), 1);
      assert.equal(await jRestarted.state(OWNER, id), "pending");
      assert.equal(await jEarlier.finish(id, "done", 200, {}), false, "the earlier process's claim is over");
      assert.equal((await jRestarted.claim("backend-1"))?.attempts, 2);
    },
  },
];
