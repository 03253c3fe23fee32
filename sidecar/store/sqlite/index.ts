// The embedded store: one SQLite file in the data folder, for one process.
import { listen } from "../../../common/listeners.ts";
import { LocalNodes } from "../local-nodes.ts";
import { LocalRates } from "../local-rates.ts";
import type { SharedStore } from "../shared-store.ts";
import { type Database, openStore } from "../store.ts";
import { SqliteDeviceStore } from "./devices.ts";
import { SqliteJobStore } from "./jobs.ts";
import { SqliteSettingStore } from "./settings.ts";
import { SqliteSessionStore } from "./sessions.ts";
import { WalCheckpointer } from "./checkpointer.ts";

/** The embedded store on `db` (a file of openStore, or ":memory:"); closing it closes the database (and stops its checkpointer). */
export function sqliteStore(db: Database, nodeId = "local", checkpointer?: WalCheckpointer): SharedStore {
  const availability = new Set<(available: boolean) => void>();
  return {
    kind: "sqlite",
    nodeId,
    sessions: new SqliteSessionStore(db, nodeId),
    jobs: (options) => new SqliteJobStore(db, options),
    rates: (clock) => new LocalRates(clock),
    devices: new SqliteDeviceStore(db),
    settings: new SqliteSettingStore(db),
    nodes: new LocalNodes(),
    available: () => db.isOpen,
    onAvailability(listener) {
      return listen(availability, listener);
    },
    async close() {
      // The worker's connection first: the last one to close removes the log.
      await checkpointer?.stop();
      if (db.isOpen) db.close();
    },
  };
}

/** The embedded store in a file (created when missing), its log copied into the file by a worker thread. */
export function openSqliteStore(file: string, nodeId?: string, log?: (line: string) => void): SharedStore {
  const db = openStore(file);
  return sqliteStore(db, nodeId, new WalCheckpointer(db, file, log ? { log } : {}));
}
