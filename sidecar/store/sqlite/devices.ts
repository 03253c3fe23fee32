// Paired devices in the embedded store: digests of their tokens, never the
// tokens, and each one's Web Push subscription in a table of its own that
// goes with the device (a foreign key that cascades); tables devices and
// device_pushes, made by ./schema.ts.
import type { StatementSync } from "node:sqlite";
import { type Database, preparedStatements, transaction } from "../store.ts";
import type { DeviceStore, StoredDevice, StoredPush } from "../shared-store.ts";

interface Row {
  id: string;
  label: string;
  digest: Uint8Array;
  created_at: number;
  last_used_at: number | null;
}

export class SqliteDeviceStore implements DeviceStore {
  readonly #db: Database;
  /** Each turn that ends unwatched reads the subscriptions (notify/channels.ts): compiling that SQL each time cost more than running it. */
  readonly #sql: (text: string) => StatementSync;

  constructor(db: Database) {
    this.#db = db;
    this.#sql = preparedStatements(db);
  }

  async all(): Promise<StoredDevice[]> {
    const rows = this.#sql("SELECT id, label, digest, created_at, last_used_at FROM devices ORDER BY created_at").all() as unknown as Row[];
    return rows.map((row) => {
      const device: StoredDevice = { id: row.id, label: row.label, digest: Buffer.from(row.digest), createdAt: row.created_at };
      if (row.last_used_at !== null) device.lastUsedAt = row.last_used_at;
      return device;
    });
  }

  async insert(device: StoredDevice, max: number): Promise<boolean> {
    const { n } = this.#sql("SELECT count(*) AS n FROM devices").get() as { n: number };
    if (Number(n) >= max) return false;
    this.#sql("INSERT INTO devices (id, label, digest, created_at) VALUES (?, ?, ?, ?)").run(device.id, device.label, device.digest, device.createdAt);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return Number(this.#sql("DELETE FROM devices WHERE id = ?").run(id).changes) === 1;
  }

  async touch(id: string, at: number): Promise<void> {
    this.#sql("UPDATE devices SET last_used_at = ? WHERE id = ?").run(at, id);
  }

  async setPush(id: string, subscription: string | undefined): Promise<boolean> {
    return transaction(this.#db, () => {
      if (this.#sql("SELECT 1 FROM devices WHERE id = ?").get(id) === undefined) return false;
      if (subscription === undefined) this.#sql("DELETE FROM device_pushes WHERE device_id = ?").run(id);
      else this.#sql("INSERT INTO device_pushes (device_id, subscription) VALUES (?, ?) ON CONFLICT (device_id) DO UPDATE SET subscription = excluded.subscription").run(id, subscription);
      return true;
    });
  }

  async dropPush(id: string, subscription: string): Promise<void> {
    this.#sql("DELETE FROM device_pushes WHERE device_id = ? AND subscription = ?").run(id, subscription);
  }

  async pushes(): Promise<StoredPush[]> {
    const rows = this.#sql("SELECT device_id, subscription FROM device_pushes ORDER BY device_id").all() as unknown as Array<{ device_id: string; subscription: string }>;
    return rows.map((row) => ({ deviceId: row.device_id, subscription: row.subscription }));
  }
}
