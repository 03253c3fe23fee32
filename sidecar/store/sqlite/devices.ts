// Paired devices in the embedded store: digests of their tokens, never the tokens.
import type { Database } from "../store.ts";
import type { DeviceStore, StoredDevice } from "../shared-store.ts";

interface Row {
  id: string;
  label: string;
  digest: Uint8Array;
  created_at: number;
  last_used_at: number | null;
}

export class SqliteDeviceStore implements DeviceStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS devices (
      id TEXT PRIMARY KEY,
      label TEXT NOT NULL,
      digest BLOB NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`);
  }

  async all(): Promise<StoredDevice[]> {
    const rows = this.#db.prepare("SELECT id, label, digest, created_at, last_used_at FROM devices ORDER BY created_at").all() as unknown as Row[];
    return rows.map((row) => {
      const device: StoredDevice = { id: row.id, label: row.label, digest: Buffer.from(row.digest), createdAt: row.created_at };
      if (row.last_used_at !== null) device.lastUsedAt = row.last_used_at;
      return device;
    });
  }

  async insert(device: StoredDevice, max: number): Promise<boolean> {
    const { n } = this.#db.prepare("SELECT count(*) AS n FROM devices").get() as { n: number };
    if (Number(n) >= max) return false;
    this.#db
      .prepare("INSERT INTO devices (id, label, digest, created_at) VALUES (?, ?, ?, ?)")
      .run(device.id, device.label, device.digest, device.createdAt);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return Number(this.#db.prepare("DELETE FROM devices WHERE id = ?").run(id).changes) === 1;
  }

  async touch(id: string, at: number): Promise<void> {
    this.#db.prepare("UPDATE devices SET last_used_at = ? WHERE id = ?").run(at, id);
  }
}
