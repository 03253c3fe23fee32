// The embedded store: one SQLite file in the data folder, for one process.
import { LocalNodes } from "../local-nodes.ts";
import { LocalRates } from "../local-rates.ts";
import type { SharedStore } from "../shared-store.ts";
import { type Database, openStore } from "../store.ts";
import { SqliteDeviceStore } from "./devices.ts";
import { SqliteJobStore } from "./jobs.ts";
import { SqliteSessionStore } from "./sessions.ts";

/** The embedded store on `db` (a file of openStore, or ":memory:"); closing it closes the database. */
export function sqliteStore(db: Database, nodeId = "local"): SharedStore {
  const availability = new Set<(available: boolean) => void>();
  return {
    kind: "sqlite",
    nodeId,
    sessions: new SqliteSessionStore(db, nodeId),
    jobs: (options) => new SqliteJobStore(db, options),
    rates: (clock) => new LocalRates(clock),
    devices: new SqliteDeviceStore(db),
    nodes: new LocalNodes(),
    available: () => db.isOpen,
    onAvailability(listener) {
      availability.add(listener);
      return () => availability.delete(listener);
    },
    async close() {
      if (db.isOpen) db.close();
    },
  };
}

/** The embedded store in a file (created when missing). */
export function openSqliteStore(file: string, nodeId?: string): SharedStore {
  return sqliteStore(openStore(file), nodeId);
}
