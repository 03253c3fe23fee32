// Rows of what notifications keep in the store: each paired device's Web Push
// subscription (it goes with the device) and the values made once that every
// node shares (the key pair that signs Web Push messages).
import assert from "node:assert/strict";
import type { StoredDevice } from "../../sidecar/store/shared-store.ts";
import type { Row } from "./harness.ts";

function device(id: string, createdAt: number): StoredDevice {
  return { id, label: `Phone ${id}`, digest: Buffer.from(`digest of ${id}, 32 bytes long....`).subarray(0, 32), createdAt };
}

export const notifyRows: Row[] = [
  {
    name: "push subscriptions: set, replaced, listed by every node; refused for a device that is not paired",
    async run({ a, b }) {
      await a.devices.insert(device("d1", 1), 10);
      await a.devices.insert(device("d2", 2), 10);
      assert.equal(await a.devices.setPush("d1", '{"endpoint":"https://push.example/1"}'), true);
      assert.equal(await b.devices.setPush("d2", '{"endpoint":"https://push.example/2"}'), true);
      assert.equal(await a.devices.setPush("d2", '{"endpoint":"https://push.example/2b"}'), true, "a new subscription replaces the old");
      assert.deepEqual(await b.devices.pushes(), [
        { deviceId: "d1", subscription: '{"endpoint":"https://push.example/1"}' },
        { deviceId: "d2", subscription: '{"endpoint":"https://push.example/2b"}' },
      ]);
      assert.equal(await a.devices.setPush("never-paired", '{"endpoint":"https://push.example/x"}'), false);
      assert.equal((await a.devices.pushes()).length, 2, "nothing written for a device that is not paired");
      assert.equal(await b.devices.setPush("d1", undefined), true);
      assert.deepEqual((await a.devices.pushes()).map((p) => p.deviceId), ["d2"], "undefined removes it");
    },
  },
  {
    name: "push subscriptions: a revoked device's subscription is gone with it, and a device paired again under its id starts with none",
    async run({ a, b }) {
      await a.devices.insert(device("d1", 1), 10);
      await a.devices.setPush("d1", '{"endpoint":"https://push.example/1"}');
      assert.equal(await b.devices.delete("d1"), true);
      assert.deepEqual(await a.devices.pushes(), []);
      assert.equal(await a.devices.setPush("d1", '{"endpoint":"https://push.example/1"}'), false, "no subscription for a revoked device");
      await a.devices.insert(device("d1", 3), 10);
      assert.deepEqual(await b.devices.pushes(), []);
    },
  },
  {
    name: "push subscriptions: dropPush removes the subscription the push service refused, never a newer one",
    async run({ a, b }) {
      await a.devices.insert(device("d1", 1), 10);
      await a.devices.setPush("d1", '{"endpoint":"https://push.example/old"}');
      await b.devices.setPush("d1", '{"endpoint":"https://push.example/new"}');
      await a.devices.dropPush("d1", '{"endpoint":"https://push.example/old"}');
      assert.deepEqual(await a.devices.pushes(), [{ deviceId: "d1", subscription: '{"endpoint":"https://push.example/new"}' }]);
      await b.devices.dropPush("d1", '{"endpoint":"https://push.example/new"}');
      assert.deepEqual(await a.devices.pushes(), []);
      assert.equal((await a.devices.all()).length, 1, "the device stays paired");
    },
  },
  {
    name: "settings: the first value stored wins, on every node, even when two nodes race",
    async run({ a, b }) {
      assert.equal(await a.settings.get("vapid"), undefined);
      const [first, second] = await Promise.all([a.settings.putIfAbsent("vapid", "from-a"), b.settings.putIfAbsent("vapid", "from-b")]);
      assert.equal(first, second, "both nodes hold the same value");
      assert.ok(first === "from-a" || first === "from-b");
      assert.equal(await b.settings.putIfAbsent("vapid", "later"), first, "a later value does not replace it");
      assert.equal(await a.settings.get("vapid"), first);
      assert.equal(await a.settings.get("other"), undefined);
    },
  },
];
