// Paired devices: each has a token of its own that stands for the server's
// person (OWNER), so a phone can be revoked without touching the person's
// sessions and deferred jobs, which belong to the person, not to a token.
// Only a digest of each token is stored; the token is shown once, at pairing.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { DeviceInfo, PairedDevice } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../bridge/rpc-failure.ts";
import type { NodeStore, StoredDevice, DeviceStore } from "../store/shared-store.ts";
import { DEFAULT_DEVICE_LAST_USE_WRITE_MS, DEFAULT_MAX_DEVICES, DEFAULT_MAX_DEVICE_LABEL_CHARS } from "./limits.ts";

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

/**
 * The devices, kept in memory so that authenticating a request needs no
 * round trip to the store; on a shared store, the other nodes hear of a
 * pairing or a revocation through the store's events and read the list again.
 */
export class DeviceRegistry {
  readonly #store: DeviceStore;
  readonly #nodes: NodeStore | undefined;
  #devices = new Map<string, Device>();
  readonly #listeners = new Set<() => void>();
  readonly #revokeListeners = new Set<(deviceId: string) => void>();
  readonly #maxDevices: number;
  readonly #clock: () => number;
  readonly #unsubscribe: () => void;

  private constructor(store: DeviceStore, nodes: NodeStore | undefined, options: { maxDevices?: number; clock?: () => number }) {
    this.#store = store;
    this.#nodes = nodes;
    this.#maxDevices = options.maxDevices ?? DEFAULT_MAX_DEVICES;
    this.#clock = options.clock ?? Date.now;
    this.#unsubscribe =
      nodes?.subscribe((event) => {
        if (event.kind === "device-revoked") {
          if (this.#devices.delete(event.deviceId)) for (const listener of this.#revokeListeners) listener(event.deviceId);
          this.#changed();
        } else if (event.kind === "devices-changed") {
          void this.reload().catch(() => undefined);
        }
      }) ?? (() => undefined);
  }

  /** The registry with the stored devices read; `nodes` carries other nodes' changes on a shared store. */
  static async open(store: DeviceStore, options: { nodes?: NodeStore; maxDevices?: number; clock?: () => number } = {}): Promise<DeviceRegistry> {
    const registry = new DeviceRegistry(store, options.nodes, options);
    await registry.reload();
    return registry;
  }

  /** Reads the list again from the store. */
  async reload(): Promise<void> {
    const stored = await this.#store.all();
    const next = new Map(stored.map((d) => [d.id, toDevice(d)]));
    // A device whose last use is newer here than in the store keeps it.
    for (const [id, device] of next) {
      const known = this.#devices.get(id);
      if (known?.info.lastUsedAt !== undefined && (device.info.lastUsedAt ?? 0) < known.info.lastUsedAt) device.info.lastUsedAt = known.info.lastUsedAt;
    }
    this.#devices = next;
    this.#changed();
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
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Called with the id of each revoked device, to close its connections. */
  onRevoke(listener: (deviceId: string) => void): () => void {
    this.#revokeListeners.add(listener);
    return () => this.#revokeListeners.delete(listener);
  }

  close(): void {
    this.#unsubscribe();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
