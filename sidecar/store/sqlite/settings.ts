// Values the server makes once (the key that signs Web Push messages), in the
// embedded store (table settings, made by ./schema.ts).
import type { Database } from "../store.ts";
import type { SettingStore } from "../shared-store.ts";

export class SqliteSettingStore implements SettingStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(key: string): Promise<string | undefined> {
    const row = this.#db.prepare("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | undefined;
    return row?.value;
  }

  async putIfAbsent(key: string, value: string): Promise<string> {
    this.#db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(key, value);
    return (await this.get(key)) ?? value;
  }
}
