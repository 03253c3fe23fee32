// Rows of the rate buckets, the paired devices and the nodes.
import assert from "node:assert/strict";
import type { NodeInfo, StoreEvent, StoredDevice } from "../../sidecar/store/shared-store.ts";
import { ManualClock, until, type Row } from "./harness.ts";

function device(id: string, createdAt: number): StoredDevice {
  return { id, label: `Phone ${id}`, digest: Buffer.from(`digest of ${id}, 32 bytes long....`).subarray(0, 32), createdAt };
}

export const sharedRows: Row[] = [
  {
    name: "rates: a bucket of N a minute allows N requests, then refuses with retryAfterSeconds > 0, and refills with time",
    async run({ a }) {
      const clock = new ManualClock();
      const rates = a.rates(clock.read);
      for (let i = 0; i < 3; i++) assert.deepEqual(await rates.take("person-1", 3), { allowed: true }, `request ${i + 1}`);
      const refused = await rates.take("person-1", 3);
      assert.equal(refused.allowed, false);
      assert.ok(!refused.allowed && refused.retryAfterSeconds > 0 && refused.retryAfterSeconds <= 20, JSON.stringify(refused));
      assert.deepEqual(await rates.take("person-2", 3), { allowed: true }, "each key has its own bucket");
      clock.advance(20_000);
      assert.deepEqual(await rates.take("person-1", 3), { allowed: true }, "one request back after a third of a minute");
      assert.equal((await rates.take("person-1", 3)).allowed, false);
      await assert.rejects(rates.take("person-1", 0), RangeError);
    },
  },
  {
    name: "rates: on the store's own time (no clock given) the bucket runs out too",
    async run({ a }) {
      const rates = a.rates();
      assert.deepEqual(await rates.take("person-1", 2), { allowed: true });
      assert.deepEqual(await rates.take("person-1", 2), { allowed: true });
      const refused = await rates.take("person-1", 2);
      assert.ok(!refused.allowed && refused.retryAfterSeconds > 0 && refused.retryAfterSeconds <= 30, JSON.stringify(refused));
    },
  },
  {
    name: "rates: one person's bucket is shared by every node",
    cluster: true,
    async run({ a, b }) {
      assert.deepEqual(await a.rates().take("person-1", 2), { allowed: true });
      assert.deepEqual(await b.rates().take("person-1", 2), { allowed: true });
      assert.equal((await a.rates().take("person-1", 2)).allowed, false);
      assert.equal((await b.rates().take("person-1", 2)).allowed, false);
    },
  },
  {
    name: "devices: insert up to the max (racing inserts included), list, touch, delete",
    async run({ a, b }) {
      const racing = await Promise.all([1, 2, 3, 4, 5].map((n) => (n % 2 ? a : b).devices.insert(device(`d${n}`, n), 3)));
      assert.equal(racing.filter(Boolean).length, 3, "five racing inserts, three places");
      const listed = await b.devices.all();
      assert.equal(listed.length, 3);
      const [first, second] = listed;
      assert.ok(first && second && first.createdAt < second.createdAt, "oldest first");
      assert.deepEqual(first, device(first.id, first.createdAt), "the digest comes back as the same bytes, no last use yet");
      assert.equal(await a.devices.insert(device("d6", 6), 3), false);

      await a.devices.touch(first.id, 12_345);
      assert.equal((await b.devices.all()).find((d) => d.id === first.id)?.lastUsedAt, 12_345);
      assert.equal(await b.devices.delete(first.id), true);
      assert.equal(await a.devices.delete(first.id), false, "deleted once");
      await a.devices.touch(first.id, 99_999);
      assert.equal((await a.devices.all()).some((d) => d.id === first.id), false, "a touch does not bring a revoked device back");
      assert.equal(await b.devices.insert(device("d6", 6), 3), true, "a deleted device frees its place");
      assert.deepEqual((await a.devices.all()).find((d) => d.id === "d6"), device("d6", 6));
      await a.devices.touch("never-there", 1);
      assert.equal((await a.devices.all()).length, 3);
    },
  },
  {
    name: "nodes: a heartbeat is visible to another node; leave removes it at once",
    async run({ a, b }) {
      const info: NodeInfo = { id: a.nodeId, url: "https://node-a.example:8765", startedAt: 1_700_000_000_000 };
      await a.nodes.heartbeat(info, 60_000);
      assert.deepEqual((await b.nodes.alive()).find((n) => n.id === a.nodeId), info);
      await a.nodes.leave(a.nodeId);
      assert.equal((await b.nodes.alive()).some((n) => n.id === a.nodeId), false);
    },
  },
  {
    name: "nodes: a heartbeat runs out after its TTL",
    cluster: true,
    async run({ a, b }) {
      await a.nodes.heartbeat({ id: a.nodeId, url: "", startedAt: 1 }, 60_000);
      await b.nodes.heartbeat({ id: b.nodeId, url: "", startedAt: 2 }, 1_000);
      const ids = async (): Promise<string[]> => (await a.nodes.alive()).map((n) => n.id).sort();
      assert.deepEqual(await ids(), [a.nodeId, b.nodeId]);
      await until(async () => (await ids()).length === 1, "node B's heartbeat to run out");
      assert.deepEqual(await ids(), [a.nodeId]);
    },
  },
  {
    name: "nodes: an event published by one node reaches the subscribers of every node, its own included",
    async run({ a, b }) {
      const atA: StoreEvent[] = [];
      const stillAtA: StoreEvent[] = [];
      const atB: StoreEvent[] = [];
      const stopA = a.nodes.subscribe((e) => atA.push(e));
      a.nodes.subscribe((e) => stillAtA.push(e));
      b.nodes.subscribe((e) => atB.push(e));
      await a.nodes.publish({ kind: "device-revoked", deviceId: "d1" });
      await until(() => atA.length === 1 && atB.length === 1, "the event at both nodes");
      assert.deepEqual(atB, [{ kind: "device-revoked", deviceId: "d1" }]);
      assert.deepEqual(atA, atB);
      stopA();
      await b.nodes.publish({ kind: "jobs-pending" });
      await until(() => atB.length === 2 && stillAtA.length === 2, "the second event at both nodes");
      assert.deepEqual(atB[1], { kind: "jobs-pending" });
      assert.deepEqual(stillAtA, atB);
      assert.equal(atA.length, 1, "an unsubscribed listener hears no more");
    },
  },
];
