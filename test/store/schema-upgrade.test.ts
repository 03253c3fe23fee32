// The embedded store's schema versions (sidecar/store/sqlite/schema.ts): a
// data folder written by the previous version (test/fixtures/store-v1, made
// by acp-remote before versions were kept) opens in this one through
// `acp-remote serve`, migrated, and its session replays; a data folder of a
// newer acp-remote is refused with a message that says so, and left as it
// was; migrations run in order, each whole or not at all.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { Acp } from "../../protocol/acp.ts";
import { MIGRATIONS, migrate, SCHEMA_VERSION, schemaVersion } from "../../sidecar/store/sqlite/schema.ts";
import { StoreVersionError } from "../../sidecar/store/schema-version.ts";
import { openStore, STORE_FILE } from "../../sidecar/store/store.ts";
import { AcpPeer } from "../helpers/acp-peer.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { ManagedProcess, removeOnExit } from "../helpers/managed-process.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

const REPO = resolve(import.meta.dirname, "../..");
/** What test/fixtures/store-v1/README.md says the fixture holds. */
const V1 = {
  file: join(REPO, "test/fixtures/store-v1", STORE_FILE),
  token: "store-v1-fixture-token",
  sessionId: "fixture-00c23e25-0d0f-43b1-8d62-282b3ec9f8b2",
  cwd: "/tmp",
  text: "hello from a data folder of schema version 1",
};

const work = mkdtempSync(join(tmpdir(), "acp-remote-schema-"));
const forget = removeOnExit(work);
const servers: ManagedProcess[] = [];
const peers: AcpPeer[] = [];
after(async () => {
  for (const peer of peers) await peer.close();
  for (const server of servers) await server.stop();
  rmSync(work, { recursive: true, force: true });
  forget();
});

let folders = 0;
/** A data folder of its own holding a copy of the fixture's store. */
function dataFolderWith(file: string): string {
  const dir = join(work, `data-${++folders}`);
  mkdirSync(dir, { mode: 0o700 });
  copyFileSync(file, join(dir, STORE_FILE));
  return dir;
}

function serveOn(dataDir: string): ManagedProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env["ACP_REMOTE_TOKEN"];
  delete env["ACP_REMOTE_DATA_DIR"];
  const server = new ManagedProcess({
    name: "acp-remote serve",
    command: NODE,
    args: [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", V1.token, "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`],
    env,
  });
  servers.push(server);
  return server;
}

function versionOf(file: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return schemaVersion(db);
  } finally {
    db.close();
  }
}

describe("the embedded store's schema versions", () => {
  it("the migrations are numbered 1, 2, 3, … in order, and this version writes the last", () => {
    assert.deepEqual(
      MIGRATIONS.map((m) => m.version),
      MIGRATIONS.map((_, i) => i + 1),
    );
    assert.equal(SCHEMA_VERSION, MIGRATIONS.length);
  });

  it("a new store is made at this version", () => {
    const db = openStore(join(work, "new.sqlite"));
    try {
      assert.equal(schemaVersion(db), SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });

  it("a data folder of schema version 1, written before versions were kept, opens in this version: migrated, its session replays and takes a new prompt", async () => {
    assert.equal(versionOf(V1.file), 0, "the fixture is as the earlier acp-remote left it");
    const dataDir = dataFolderWith(V1.file);
    const server = serveOn(dataDir);
    await server.start(/acp-remote listening on \S+\n/);
    const url = (await server.waitForOutput(/acp-remote listening on (\S+)\n/))[1] as string;
    const peer = await AcpPeer.open(url, V1.token, { agent: "fixture" });
    peers.push(peer);
    await peer.request(Acp.agent.session.load, { sessionId: V1.sessionId, cwd: V1.cwd, mcpServers: [] });
    const replayed = peer.received
      .filter((m) => m["method"] === Acp.client.session.update)
      .map((m) => (m["params"] as { update: { sessionUpdate: string } }).update);
    assert.deepEqual(
      replayed.map((u) => u.sessionUpdate).filter((kind) => kind !== "session_info_update" && kind !== "available_commands_update" && kind !== "current_mode_update"),
      ["user_message_chunk", "agent_thought_chunk", "plan", "agent_message_chunk"],
      JSON.stringify(replayed),
    );
    assert.equal(peer.agentText(V1.sessionId), V1.text);
    // The session goes on: the agent gets it back and answers.
    const answer = (await peer.request(Acp.agent.session.prompt, { sessionId: V1.sessionId, prompt: [{ type: "text", text: "echo  and after the upgrade" }] }, 60_000)) as { stopReason: string };
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(peer.agentText(V1.sessionId), `${V1.text} and after the upgrade`);
    await peer.close();
    assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.output());
    assert.equal(versionOf(join(dataDir, STORE_FILE)), SCHEMA_VERSION);
  });

  it("regression: a data folder of a newer acp-remote was opened and written to; `serve` refuses it, says which versions, and leaves the file as it was", async () => {
    const dataDir = dataFolderWith(V1.file);
    const file = join(dataDir, STORE_FILE);
    const newer = SCHEMA_VERSION + 1;
    const db = new DatabaseSync(file);
    db.exec(`PRAGMA user_version = ${newer}`);
    db.close();
    const before = readFileSync(file);
    const server = serveOn(dataDir);
    await assert.rejects(server.start(/acp-remote listening on \S+\n/), /exited \(1\)/);
    assert.match(
      server.output(),
      new RegExp(`acp-remote serve: the data folder ${dataDir} \\(its store ${STORE_FILE}\\) was written by a newer acp-remote: it is at schema version ${newer}, and acp-remote \\S+ knows versions up to ${SCHEMA_VERSION}\\. .*--data-dir.*nothing in it was changed\\.`),
    );
    assert.ok(readFileSync(file).equals(before), "the file is byte for byte as it was");
    assert.equal(versionOf(file), newer);
  });

  it("migrations run in order, each in a transaction with the version it reaches: one that fails leaves the file at the version before it", () => {
    const file = join(work, "steps.sqlite");
    const db = new DatabaseSync(file);
    try {
      const steps = [
        ...MIGRATIONS,
        { version: SCHEMA_VERSION + 1, summary: "a column", up: (d: DatabaseSync) => d.exec("ALTER TABLE settings ADD COLUMN note TEXT") },
        {
          version: SCHEMA_VERSION + 2,
          summary: "a table, then a failure",
          up: (d: DatabaseSync) => {
            d.exec("CREATE TABLE half_done (id INTEGER)");
            throw new Error("disk full");
          },
        },
      ];
      assert.throws(() => migrate(db, file, steps), new RegExp(`could not be brought from schema version ${SCHEMA_VERSION + 1} to ${SCHEMA_VERSION + 2} \\(a table, then a failure\\): disk full; it stays at version ${SCHEMA_VERSION + 1}`));
      assert.equal(schemaVersion(db), SCHEMA_VERSION + 1);
      const settings = db.prepare("SELECT name FROM pragma_table_info('settings')").all().map((r) => (r as { name: string }).name);
      assert.ok(settings.includes("note"), "the migration before the failed one stayed");
      assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half_done'").get(), undefined, "nothing of the failed one stayed");
      // Opened again by a version that knows only the first migrations: refused, not rewritten.
      assert.throws(() => migrate(db, file), (error: unknown) => error instanceof StoreVersionError && error.found === SCHEMA_VERSION + 1 && error.known === SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });
});
