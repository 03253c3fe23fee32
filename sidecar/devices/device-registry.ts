// Paired devices: each has a token of its own that stands for the server's
// person (OWNER), so a phone can be revoked without touching the person's
// sessions and deferred jobs, which belong to the person, not to a token.
// Only a digest of each token is stored; the token is shown once, at pairing.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { DeviceInfo, PairedDevice } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { listen } from "../../common/listeners.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { NodeStore, StoredDevice, DeviceStore } from "../store/shared-store.ts";
import { DEFAULT_DEVICE_LAST_USE_WRITE_MS, DEFAULT_DEVICE_RELOAD_MS, DEFAULT_MAX_DEVICES, DEFAULT_MAX_DEVICE_LABEL_CHARS } from "./limits.ts";

interface Device {
  info: DeviceInfo;
  digest: Buffer;
  /** When lastUsedAt was last written to the store. */
  written: number;
}

export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function toDevice(stored: StoredDevice): Device {
  const info: DeviceInfo = { deviceId: stored.id, label: stored.label, createdAt: stored.createdAt };
  if (stored.lastUsedAt !== undefined) info.lastUsedAt = stored.lastUsedAt;
  return { info, digest: stored.digest, written: stored.lastUsedAt ?? 0 };
}

export interface DeviceRegistryOptions {
  /** Carries the other nodes' pairings and revocations on a shared store. */
  nodes?: NodeStore;
  /** Tells when the link to the store comes back (SharedStore.onAvailability): the list is read again then. */
  onAvailability?: (listener: (available: boolean) => void) => () => void;
  /** How often the list is read again, in milliseconds (default DEFAULT_DEVICE_RELOAD_MS). */
  reloadMs?: number;
  maxDevices?: number;
  clock?: () => number;
}

/**
 * The devices, kept in memory so that authenticating a request needs no
 * round trip to the store; on a shared store, the other nodes hear of a
 * pairing or a revocation through the store's events and read the list again.
 *
 * An event is sent once: a node whose link to the store is down misses it.
 * So the list is also read again whenever the link comes back and every
 * DEFAULT_DEVICE_RELOAD_MS, and a device that disappears from it is revoked
 * here as if the event had come. A read that was under way when a revocation
 * arrived may still hold the device: a revoked id is kept as a tombstone until
 * a read begun after it no longer holds the device, and no read brings it back.
 */
export class DeviceRegistry {
  readonly #store: DeviceStore;
  readonly #nodes: NodeStore | undefined;
  #devices = new Map<string, Device>();
  readonly #listeners = new Set<() => void>();
  readonly #revokeListeners = new Set<(deviceId: string) => void>();
  readonly #maxDevices: number;
  readonly #clock: () => number;
  readonly #unsubscribe: Array<() => void> = [];
  readonly #timer: NodeJS.Timeout;
  /** Reads of the store begun so far; each read is numbered by it. */
  #reads = 0;
  /** The number of the read whose list is in #devices: an older one that ends later is dropped. */
  #applied = 0;
  /** Revoked device id → the value of #reads when it was revoked. */
  readonly #tombstones = new Map<string, number>();

  private constructor(store: DeviceStore, options: DeviceRegistryOptions) {
    this.#store = store;
    this.#nodes = options.nodes;
    this.#maxDevices = options.maxDevices ?? DEFAULT_MAX_DEVICES;
    this.#clock = options.clock ?? Date.now;
    const reloadQuietly = (): void => void this.reload().catch(() => undefined);
    if (options.nodes) {
      this.#unsubscribe.push(
        options.nodes.subscribe((event) => {
          if (event.kind === "device-revoked") this.#forget(event.deviceId);
          else if (event.kind === "devices-changed") reloadQuietly();
        }),
      );
    }
    if (options.onAvailability) {
      this.#unsubscribe.push(
        options.onAvailability((available) => {
          // Back after an outage: what was revoked meanwhile was told to nobody here.
          if (available) reloadQuietly();
        }),
      );
    }
    this.#timer = setInterval(reloadQuietly, options.reloadMs ?? DEFAULT_DEVICE_RELOAD_MS);
    this.#timer.unref();
  }

  /** The registry with the stored devices read. */
  static async open(store: DeviceStore, options: DeviceRegistryOptions = {}): Promise<DeviceRegistry> {
    const registry = new DeviceRegistry(store, options);
    try {
      await registry.reload();
    } catch (error) {
      registry.close();
      throw error;
    }
    return registry;
  }

  /** Reads the list again from the store; devices no longer there are revoked here. */
  async reload(): Promise<void> {
    const read = ++this.#reads;
    const stored = await this.#store.all();
    // A read begun later has already answered: this one is older news.
    if (read < this.#applied) return;
    this.#applied = read;
    const listed = new Set(stored.map((d) => d.id));
    // A tombstone goes once a read begun after the revocation shows the device gone from the store.
    for (const [id, revokedAt] of this.#tombstones) {
      if (read > revokedAt && !listed.has(id)) this.#tombstones.delete(id);
    }
    const before = JSON.stringify(this.list());
    const previous = this.#devices;
    const next = new Map(stored.filter((d) => !this.#tombstones.has(d.id)).map((d) => [d.id, toDevice(d)]));
    // A device whose last use is newer here than in the store keeps it.
    for (const [id, device] of next) {
      const known = previous.get(id);
      if (known?.info.lastUsedAt !== undefined && (device.info.lastUsedAt ?? 0) < known.info.lastUsedAt) device.info.lastUsedAt = known.info.lastUsedAt;
    }
    this.#devices = next;
    // Gone from the store: revoked on a node whose event did not reach us. Its connections end here too.
    for (const id of previous.keys()) {
      if (!next.has(id)) for (const listener of this.#revokeListeners) listener(id);
    }
    if (JSON.stringify(this.list()) !== before) this.#changed();
  }

  list(): DeviceInfo[] {
    return [...this.#devices.values()].map((d) => ({ ...d.info }));
  }

  async pair(label: string): Promise<PairedDevice> {
    const name = label.trim().slice(0, DEFAULT_MAX_DEVICE_LABEL_CHARS) || "Device";
    const tooMany = () => new RpcFailure(ErrorCode.InvalidRequest, `at most ${this.#maxDevices} devices can be paired: revoke one first`);
    if (this.#devices.size >= this.#maxDevices) throw tooMany();
    const token = randomBytes(32).toString("base64url");
    const digest = tokenDigest(token);
    const info: DeviceInfo = { deviceId: randomUUID(), label: name, createdAt: this.#clock() };
    if (!(await this.#store.insert({ id: info.deviceId, label: info.label, digest, createdAt: info.createdAt }, this.#maxDevices))) throw tooMany();
    this.#devices.set(info.deviceId, { info, digest, written: 0 });
    this.#changed();
    await this.#nodes?.publish({ kind: "devices-changed" });
    return { device: { ...info }, token };
  }

  /** The token stops working now, on every node; listeners close the device's open connections. */
  async revoke(deviceId: string): Promise<void> {
    // Before the store is asked: a read under way must not bring the device back.
    this.#tombstones.set(deviceId, this.#reads);
    const known = this.#devices.delete(deviceId);
    const deleted = await this.#store.delete(deviceId);
    if (!known && !deleted) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown device ${deviceId}`);
    for (const listener of this.#revokeListeners) listener(deviceId);
    this.#changed();
    await this.#nodes?.publish({ kind: "device-revoked", deviceId });
  }

  /**
   * The device whose token has this digest, or undefined; its last use is
   * recorded. Every device is compared, in constant time, so the timing does
   * not tell which one matched.
   */
  authenticate(digest: Buffer): string | undefined {
    let found: Device | undefined;
    for (const device of this.#devices.values()) {
      if (timingSafeEqual(device.digest, digest) && found === undefined) found = device;
    }
    if (found === undefined) return undefined;
    const now = this.#clock();
    found.info.lastUsedAt = now;
    // Every request uses the token: the store and the views hear of it at most this often.
    if (now - found.written >= DEFAULT_DEVICE_LAST_USE_WRITE_MS) {
      found.written = now;
      void this.#store.touch(found.info.deviceId, now).catch(() => undefined);
      this.#changed();
    }
    return found.info.deviceId;
  }

  onChange(listener: () => void): () => void {
    return listen(this.#listeners, listener);
  }

  /** Called with the id of each revoked device, to close its connections. */
  onRevoke(listener: (deviceId: string) => void): () => void {
    return listen(this.#revokeListeners, listener);
  }

  close(): void {
    clearInterval(this.#timer);
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
  }

  /** A revocation told by another node: the device is refused from now on, and no read under way brings it back. */
  #forget(deviceId: string): void {
    this.#tombstones.set(deviceId, this.#reads);
    if (this.#devices.delete(deviceId)) {
      for (const listener of this.#revokeListeners) listener(deviceId);
      this.#changed();
    }
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
