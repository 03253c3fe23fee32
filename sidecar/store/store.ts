// The embedded store: one SQLite file in the data folder (node:sqlite, built
// into Node 22.13+, so nothing native to compile). Its tables are made and
// changed by the versioned migrations of sqlite/schema.ts, which run when the
// file is opened; writes are synchronous, so a result written before a
// response is on disk when the response leaves.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { closeSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { makePrivateFolder, PRIVATE_FILE_MODE } from "../../common/private-files.ts";
import { migrate, refuseNewer } from "./sqlite/schema.ts";

export type Database = DatabaseSync;

export const STORE_FILE = "acp-remote.sqlite";

/**
 * Opens (and creates) the store, at the schema version of this acp-remote
 * (the migrations it lacks are run). `":memory:"` gives a throwaway one. A
 * file written by a newer acp-remote is refused (StoreVersionError) before
 * anything is written to it.
 */
export function openStore(file: string): Database {
  if (file !== ":memory:") {
    makePrivateFolder(dirname(file));
    // Created empty (a new database to SQLite) and private before SQLite opens
    // it: SQLite gives its -wal and -shm files the database file's mode.
    closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
  }
  // Loaded here, not imported: the commands that open no store (`--version`,
  // `--help`, `connect`) then run on a Node that has no node:sqlite.
  const { DatabaseSync: Sqlite } = process.getBuiltinModule("node:sqlite");
  const db = new Sqlite(file);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    // Before the journal mode is set, which writes to the file.
    refuseNewer(db, file);
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    migrate(db, file);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Runs `fn` in one transaction: all of it commits or none of it. */
export function transaction<T>(db: Database, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = fn();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

/**
 * The prepared statement for a SQL text, compiled once per text: a poll or a
 * journal write would otherwise spend more time compiling its SQL than
 * running it.
 */
export function preparedStatements(db: Database): (text: string) => StatementSync {
  const statements = new Map<string, StatementSync>();
  return (text) => {
    let statement = statements.get(text);
    if (statement === undefined) {
      statement = db.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
}
