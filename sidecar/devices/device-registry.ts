// Paired devices: each has a token of its own that stands for the server's
// person (OWNER), so a phone can be revoked without touching the person's
// sessions and deferred jobs, which belong to the person, not to a token.
// Only a digest of each token is stored; the token is shown once, at pairing.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { DeviceInfo, PairedDevice } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../bridge/rpc-failure.ts";
import type { Database } from "../store/store.ts";
import { DEFAULT_DEVICE_LAST_USE_WRITE_MS, DEFAULT_MAX_DEVICES, DEFAULT_MAX_DEVICE_LABEL_CHARS } from "./limits.ts";

interface Row {
  id: string;
  label: string;
  digest: Uint8Array;
  created_at: number;
  last_used_at: number | null;
}

interface Device {
  info: DeviceInfo;
  digest: Buffer;
  /** When lastUsedAt was last written to the store. */
  written: number;
}

export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export class DeviceRegistry {
  readonly #db: Database;
  readonly #devices = new Map<string, Device>();
  readonly #listeners = new Set<() => void>();
  readonly #revokeListeners = new Set<(deviceId: string) => void>();
  readonly #maxDevices: number;
  readonly #clock: () => number;

  constructor(db: Database, options: { maxDevices?: number; clock?: () => number } = {}) {
    this.#db = db;
    this.#maxDevices = options.maxDevices ?? DEFAULT_MAX_DEVICES;
    this.#clock = options.clock ?? Date.now;
    db.exec(`CREATE TABLE IF NOT EXISTS devices (
      id TEXT PRIMARY KEY,
      label TEXT NOT NULL,
      digest BLOB NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`);
    for (const row of db.prepare("SELECT id, label, digest, created_at, last_used_at FROM devices ORDER BY created_at").all() as unknown as Row[]) {
      const info: DeviceInfo = { deviceId: row.id, label: row.label, createdAt: row.created_at };
      if (row.last_used_at !== null) info.lastUsedAt = row.last_used_at;
      this.#devices.set(row.id, { info, digest: Buffer.from(row.digest), written: row.last_used_at ?? 0 });
    }
  }

  list(): DeviceInfo[] {
    return [...this.#devices.values()].map((d) => ({ ...d.info }));
  }

  pair(label: string): PairedDevice {
    const name = label.trim().slice(0, DEFAULT_MAX_DEVICE_LABEL_CHARS) || "Device";
    if (this.#devices.size >= this.#maxDevices) {
      throw new RpcFailure(ErrorCode.InvalidRequest, `at most ${this.#maxDevices} devices can be paired: revoke one first`);
    }
    const token = randomBytes(32).toString("base64url");
    const digest = tokenDigest(token);
    const info: DeviceInfo = { deviceId: randomUUID(), label: name, createdAt: this.#clock() };
    this.#db.prepare("INSERT INTO devices (id, label, digest, created_at) VALUES (?, ?, ?, ?)").run(info.deviceId, info.label, digest, info.createdAt);
    this.#devices.set(info.deviceId, { info, digest, written: 0 });
    this.#changed();
    return { device: { ...info }, token };
  }

  /** The token stops working now; listeners close the device's open connections. */
  revoke(deviceId: string): void {
    if (!this.#devices.delete(deviceId)) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown device ${deviceId}`);
    this.#db.prepare("DELETE FROM devices WHERE id = ?").run(deviceId);
    for (const listener of this.#revokeListeners) listener(deviceId);
    this.#changed();
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
      this.#db.prepare("UPDATE devices SET last_used_at = ? WHERE id = ?").run(now, found.info.deviceId);
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

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
