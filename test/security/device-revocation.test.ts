// A revoked device on a shared store, seen from another node: two nodes on
// one real redis-server, node B's link to it through a TCP proxy that the
// test cuts and blocks. A revocation reaches the other nodes as a one-shot
// event; B must not keep accepting the device because it missed that event
// (its link was down), nor because a read of the list it had under way when
// the event came swapped the device back in.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DeviceRegistry, tokenDigest } from "../../sidecar/devices/device-registry.ts";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";
import type { DeviceStore, SharedStore, StoredDevice, StoredPush } from "../../sidecar/store/shared-store.ts";
import { CLUSTER_NODE_SECRET } from "../helpers/cluster.ts";
import { openWs } from "../helpers/device-server.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { until } from "../store/harness.ts";

const MAIN = "main-token-device-revocation-0123456789";
/** The store's link is back, and what follows from it done, well within this, in milliseconds. */
const BACK_WITHIN_MS = 15_000;
/** Longer than any test: a registry that relies on its timer fails the test instead. */
const NO_TIMER_MS = 60 * 60_000;

const installed = redisServerPath() !== undefined;
if (!installed) console.log("# device revocation across nodes: skipped: redis-server is not installed");

/** The status of a request with `token` to `url`'s /v1. */
async function statusWith(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

/**
 * The store's devices, whose reads can be held: the read itself is done at
 * once, on the real store, and its answer is handed over when the test says.
 * That is how a read under way meets a revocation.
 */
class HeldReads implements DeviceStore {
  readonly #store: DeviceStore;
  #gate: Promise<void> | undefined;
  #open: () => void = () => undefined;
  /** Resolves once a held read has its answer from the store. */
  read: Promise<void> = Promise.resolve();
  #readDone: () => void = () => undefined;

  constructor(store: DeviceStore) {
    this.#store = store;
  }

  hold(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
    this.read = new Promise((resolve) => (this.#readDone = resolve));
  }

  release(): void {
    this.#gate = undefined;
    this.#open();
  }

  async all(): Promise<StoredDevice[]> {
    const gate = this.#gate;
    const devices = await this.#store.all();
    if (gate !== undefined) {
      this.#readDone();
      await gate;
    }
    return devices;
  }

  insert(device: StoredDevice, max: number): Promise<boolean> {
    return this.#store.insert(device, max);
  }

  delete(id: string): Promise<boolean> {
    return this.#store.delete(id);
  }

  touch(id: string, at: number): Promise<void> {
    return this.#store.touch(id, at);
  }

  setPush(id: string, subscription: string | undefined): Promise<boolean> {
    return this.#store.setPush(id, subscription);
  }

  dropPush(id: string, subscription: string): Promise<void> {
    return this.#store.dropPush(id, subscription);
  }

  pushes(): Promise<StoredPush[]> {
    return this.#store.pushes();
  }
}

describe("a revoked device on a shared store", { skip: installed ? false : "redis-server is not installed" }, () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  const folders: string[] = [];
  const cleanups: Array<() => Promise<void> | void> = [];

  before(async () => {
    redis = await startRedisServer();
    proxy = await startTcpProxy(redis.port);
  });

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await proxy?.close();
    await redis?.close();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  /** The store's address through the proxy: TLS end to end, as the certificate covers 127.0.0.1 whatever the port. */
  const throughProxy = (): string => `rediss://:${redis.password}@127.0.0.1:${proxy.port}/0`;

  /** Cuts B's link to the store and keeps it down while `meanwhile` runs, then lets it come back. */
  async function whileCutOff(store: SharedStore, meanwhile: () => Promise<void>): Promise<void> {
    proxy.block();
    proxy.cut();
    try {
      await until(() => !store.available(), "node B to lose the store", BACK_WITHIN_MS);
      await meanwhile();
    } finally {
      proxy.unblock();
    }
    await until(() => store.available(), "node B to reach the store again", BACK_WITHIN_MS);
  }

  async function node(id: string, storeUrl: string): Promise<RunningServer> {
    const dataDir = mkdtempSync(join(tmpdir(), `acp-remote-revoke-${id}-`));
    folders.push(dataDir);
    const server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [{ name: "fixture", command: process.execPath, args: [FIXTURE_AGENT] }],
      tokens: [MAIN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      store: storeUrl,
      storeCa: redis.ca,
      nodeId: id,
      nodeSecret: CLUSTER_NODE_SECRET,
      log: () => undefined,
    });
    cleanups.push(() => server.close());
    return server;
  }

  async function registry(store: SharedStore, devices: DeviceStore = store.devices): Promise<DeviceRegistry> {
    const opened = await DeviceRegistry.open(devices, { nodes: store.nodes, onAvailability: (l) => store.onAvailability(l), reloadMs: NO_TIMER_MS });
    cleanups.push(() => opened.close());
    return opened;
  }

  async function store(id: string, url: string): Promise<SharedStore> {
    const opened = await openRedisStore(url, { nodeId: id, ca: redis.ca });
    cleanups.push(() => opened.close());
    return opened;
  }

  test("a device revoked on node A is refused on node B after B's store link drops and comes back", { timeout: 4 * BACK_WITHIN_MS }, async () => {
    const a = await node("node-a", redis.url);
    const b = await node("node-b", throughProxy());
    const { device, token } = await a.devices.pair("Phone");
    await until(async () => (await statusWith(b.url, token)) === 200, "node B to accept the new device", BACK_WITHIN_MS);
    const phone = await openWs(b.url, token);

    await whileCutOff(b.store, () => a.devices.revoke(device.deviceId));

    await until(async () => (await statusWith(b.url, token)) === 401, "node B to refuse the revoked device", BACK_WITHIN_MS);
    assert.equal((await phone.closed).code, 1008, "the device's open WebSocket on node B is closed too");
    assert.equal(await statusWith(b.url, MAIN), 200, "the main token still works on node B");
  });

  test("a node reads the devices again as soon as its store link comes back, not only on its timer", { timeout: 4 * BACK_WITHIN_MS }, async () => {
    const storeA = await store("reg-a", redis.url);
    const storeB = await store("reg-b", throughProxy());
    const atA = await registry(storeA);
    const atB = await registry(storeB);
    const revokedAtB: string[] = [];
    atB.onRevoke((id) => revokedAtB.push(id));
    const { device, token } = await atA.pair("Tablet");
    await until(() => atB.authenticate(tokenDigest(token)) !== undefined, "node B to learn of the device", BACK_WITHIN_MS);

    await whileCutOff(storeB, () => atA.revoke(device.deviceId));

    await until(() => atB.authenticate(tokenDigest(token)) === undefined, "node B to refuse the revoked device", BACK_WITHIN_MS);
    assert.deepEqual(revokedAtB, [device.deviceId], "node B closes the device's connections");
  });

  test("a reload racing a revoke does not resurrect it", { timeout: 4 * BACK_WITHIN_MS }, async () => {
    const storeA = await store("race-a", redis.url);
    const storeB = await store("race-b", redis.url);
    const held = new HeldReads(storeB.devices);
    const atA = await registry(storeA);
    const atB = await registry(storeB, held);
    const { device, token } = await atA.pair("Laptop");
    await until(() => atB.authenticate(tokenDigest(token)) !== undefined, "node B to learn of the device", BACK_WITHIN_MS);

    // B reads the list, which still holds the device; the answer is late.
    held.hold();
    const reloading = atB.reload();
    await held.read;
    // Meanwhile A revokes it, and B hears of it.
    await atA.revoke(device.deviceId);
    await until(() => atB.authenticate(tokenDigest(token)) === undefined, "node B to hear of the revocation", BACK_WITHIN_MS);
    // Then the late answer lands.
    held.release();
    await reloading;
    assert.equal(atB.authenticate(tokenDigest(token)), undefined, "the late read did not bring the device back");
    assert.equal(atB.list().some((d) => d.deviceId === device.deviceId), false);
    await atB.reload();
    assert.equal(atB.authenticate(tokenDigest(token)), undefined, "nor does the next read");
  });
});
