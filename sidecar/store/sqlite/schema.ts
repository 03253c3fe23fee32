// The embedded store's schema, versioned. The file's own header keeps its
// version (SQLite's `PRAGMA user_version`: 0 in a new file, and in the files
// of acp-remote before versions were kept), and MIGRATIONS take it from each
// version to the next, in order. Opening a data folder runs the migrations the
// file has not had, each in a transaction with the version it reaches: a
// migration that fails leaves the file at the version before it, as it was.
// A file at a version above the last one here was written by a newer
// acp-remote: it is refused before anything is written to it.
//
// A change of a table is a new migration at the end of the list, never an
// edit of one that shipped: a file written by any earlier version must open
// in this one (README, "Versions").
import { basename, dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { latestVersion, type Migration, StoreVersionError } from "../schema-version.ts";

export const MIGRATIONS: readonly Migration<DatabaseSync>[] = [
  {
    version: 1,
    summary: "sessions and their journals, deferred jobs, paired devices and their Web Push subscriptions, settings",
    // IF NOT EXISTS: a file from before versions were kept already has these tables, and keeps its rows.
    up: (db) =>
      db.exec(`
        CREATE TABLE IF NOT EXISTS hub_sessions (
          id TEXT PRIMARY KEY,
          record TEXT NOT NULL,
          updated_at INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS hub_journal (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          session_id TEXT NOT NULL,
          entry TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS hub_journal_session ON hub_journal (session_id, seq);

        CREATE TABLE IF NOT EXISTS v1_jobs (
          id         TEXT PRIMARY KEY,
          owner      TEXT NOT NULL,
          backend    TEXT NOT NULL,
          model      TEXT NOT NULL,
          request    TEXT NOT NULL,
          state      TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
          created_at INTEGER NOT NULL,
          attempts   INTEGER NOT NULL DEFAULT 0,
          status     INTEGER,
          result     TEXT
        ) STRICT;
        -- The one index the job statements need besides the id: the claim
        -- (pending jobs of a backend, oldest first), the backends with pending
        -- jobs, and recover's running jobs. Every other statement goes by id;
        -- the per-owner count is read once, and the TTL sweep runs once a
        -- minute. Every submission maintains it. The two indexes of earlier
        -- files go.
        CREATE INDEX IF NOT EXISTS v1_jobs_by_backend ON v1_jobs (state, backend, created_at);
        DROP INDEX IF EXISTS v1_jobs_by_state;
        DROP INDEX IF EXISTS v1_jobs_by_owner;

        -- Digests of device tokens, never the tokens; a device's Web Push
        -- subscription goes with it (a foreign key that cascades).
        CREATE TABLE IF NOT EXISTS devices (
          id TEXT PRIMARY KEY,
          label TEXT NOT NULL,
          digest BLOB NOT NULL UNIQUE,
          created_at INTEGER NOT NULL,
          last_used_at INTEGER
        );
        CREATE TABLE IF NOT EXISTS device_pushes (
          device_id TEXT PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
          subscription TEXT NOT NULL
        );

        CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `),
  },
];

/** The version this acp-remote writes: the last migration's. */
export const SCHEMA_VERSION = latestVersion(MIGRATIONS);

/** The version the file of `db` is at. */
export function schemaVersion(db: DatabaseSync): number {
  return Number((db.prepare("PRAGMA user_version").get() as { user_version: number | bigint }).user_version);
}

/**
 * Throws StoreVersionError when the file is at a version none of
 * `migrations` reaches: a newer acp-remote wrote it. `file` names it in the
 * message (":memory:" for a throwaway store).
 */
export function refuseNewer(db: DatabaseSync, file: string, migrations: readonly Migration<DatabaseSync>[] = MIGRATIONS): void {
  const found = schemaVersion(db);
  const known = latestVersion(migrations);
  if (found <= known) return;
  const where = file === ":memory:" ? "the store" : `the data folder ${dirname(file)} (its store ${basename(file)})`;
  throw new StoreVersionError(where, found, known, "Open it with that acp-remote or a later one, or give this one another folder (--data-dir); nothing in it was changed");
}

/**
 * Runs the migrations the file of `db` has not had, in order, each in a
 * transaction that also sets the version it reaches; returns the versions
 * before and after. Refuses a file of a newer acp-remote (refuseNewer).
 */
export function migrate(db: DatabaseSync, file: string, migrations: readonly Migration<DatabaseSync>[] = MIGRATIONS): { from: number; to: number } {
  refuseNewer(db, file, migrations);
  const from = schemaVersion(db);
  let at = from;
  for (const migration of migrations) {
    if (migration.version <= at) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      migration.up(db);
      db.exec(`PRAGMA user_version = ${Math.trunc(migration.version)}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw new Error(
        `the store ${file} could not be brought from schema version ${at} to ${migration.version} (${migration.summary}): ${error instanceof Error ? error.message : String(error)}; it stays at version ${at}`,
        { cause: error },
      );
    }
    at = migration.version;
  }
  return { from, to: at };
}
