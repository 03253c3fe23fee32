// The embedded store's checkpoints (sidecar/store/sqlite/checkpointer.ts): the
// connection the sidecar writes with never copies the write-ahead log into the
// database file, a worker thread does; when the worker cannot, the writing
// connection checkpoints by itself again. Real SQLite files.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { WalCheckpointer } from "../../sidecar/store/sqlite/checkpointer.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import { type Database, openStore } from "../../sidecar/store/store.ts";

/** Writes `rows` rows of 1 KiB in transactions of 100, the way the journal writes. */
function write(db: Database, rows: number): void {
  db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  for (let i = 0; i < rows; i += 100) {
    db.exec("BEGIN IMMEDIATE");
    for (let j = 0; j < 100; j++) insert.run("x".repeat(1024));
    db.exec("COMMIT");
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

const size = (file: string): number => (existsSync(file) ? statSync(file).size : 0);

describe("embedded store: checkpoints on a worker thread", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-ckpt-"));
    file = join(dir, "store.sqlite");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("| writing connection | never checkpoints: 4 MiB written stay in the log |", () => {
    const db = openStore(file);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    write(db, 4_000);
    assert.ok(size(`${file}-wal`) > 4_000_000, `log ${size(`${file}-wal`)} bytes`);
    assert.ok(size(file) < 100_000, `database file ${size(file)} bytes: nothing copied yet`);
    db.close();
  });

  it("| with the worker | the log reaches the database file while the writer goes on |", async () => {
    const db = openStore(file);
    const checkpointer = new WalCheckpointer(db, file, { intervalMs: 50 });
    assert.equal((db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 0);
    write(db, 4_000);
    assert.ok(await until(() => size(file) > 4_000_000, 5_000), `database file ${size(file)} bytes after 5 s`);
    // The writer still writes, and reads what it wrote.
    write(db, 100);
    assert.equal((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 4_100);
    await checkpointer.stop();
    assert.ok(db.isOpen, "stopping the worker leaves the database open");
    db.close();
  });

  it("| store closed | the worker's connection closes first: the log is removed, every row is in the file |", async () => {
    const store = openSqliteStore(file);
    await store.sessions.writeJournal([{ sessionId: "s1", append: ['{"sessionUpdate":"agent_message_chunk"}'] }], { maxEntries: 10, maxBytes: 1e6 });
    await store.close();
    assert.equal(existsSync(`${file}-wal`), false, "the last connection to close checkpoints and removes the log");
    const reopened = openSqliteStore(file);
    assert.deepEqual(await reopened.sessions.journal("s1"), ['{"sessionUpdate":"agent_message_chunk"}']);
    await reopened.close();
  });

  it("| worker cannot open the file | the writing connection checkpoints by itself again, and says so |", async () => {
    const db = openStore(file);
    const lines: string[] = [];
    const checkpointer = new WalCheckpointer(db, join(dir, "missing-folder", "store.sqlite"), { intervalMs: 50, log: (line) => lines.push(line) });
    assert.ok(await until(() => lines.length > 0, 5_000), "a failure is logged");
    assert.match(lines[0]!, /checkpoint thread stopped/);
    assert.equal((db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 1_000);
    write(db, 6_000);
    assert.ok(size(file) > 1_000_000, `database file ${size(file)} bytes: SQLite checkpointed by itself`);
    await checkpointer.stop();
    db.close();
  });
});
