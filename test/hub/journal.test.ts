// The journal: what session/load replays. Consecutive text chunks merge (never
// across a mark or two messages); the oldest entries go once a bound (entries,
// bytes) is passed; it survives a reopen of the store; what it holds in memory
// is bounded; a history read is the journal as it stood at the call.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { markUpdate } from "../../protocol/history.ts";
import { Journal } from "../../sidecar/hub/journal.ts";
import {
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_MAX_JOURNAL_ENTRIES,
  DEFAULT_MAX_QUEUED_BYTES,
  DEFAULT_MAX_QUEUED_MESSAGES,
} from "../../sidecar/limits.ts";
import { openStore } from "../../sidecar/store/store.ts";
import { SqliteSessionStore } from "../../sidecar/store/sqlite/sessions.ts";

const inMemory = () => new SqliteSessionStore(openStore(":memory:"), "local");

/** The session's entries as the store holds them (a history read compacts them). */
async function stored(journal: Journal, store: SqliteSessionStore, sessionId: string): Promise<SessionUpdate[]> {
  await journal.flush();
  return (await store.journal(sessionId)).map((entry) => JSON.parse(entry) as SessionUpdate);
}

const text = (sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", t: string): SessionUpdate =>
  ({ sessionUpdate, content: { type: "text", text: t } }) as SessionUpdate;

test("a whole journal fits in one stream's queue, so a replay is never cut off", async () => {
  assert.ok(DEFAULT_MAX_JOURNAL_ENTRIES < DEFAULT_MAX_QUEUED_MESSAGES);
  assert.ok(DEFAULT_MAX_JOURNAL_BYTES < DEFAULT_MAX_QUEUED_BYTES);
});

test("consecutive text chunks of one kind merge into one entry; other updates break the run", async () => {
  const journal = new Journal(inMemory());
  for (const word of ["Hel", "lo", " world"]) journal.append("s", text("agent_message_chunk", word));
  journal.append("s", text("agent_thought_chunk", "hmm"));
  journal.append("s", text("agent_thought_chunk", "..."));
  journal.append("s", { sessionUpdate: "plan", entries: [] } as SessionUpdate);
  journal.append("s", text("agent_message_chunk", "again"));
  journal.append("other", text("agent_message_chunk", "elsewhere"));
  assert.deepEqual(await journal.entries("s"), [
    text("agent_message_chunk", "Hello world"),
    text("agent_thought_chunk", "hmm..."),
    { sessionUpdate: "plan", entries: [] },
    text("agent_message_chunk", "again"),
  ]);
  assert.deepEqual(await journal.entries("other"), [text("agent_message_chunk", "elsewhere")]);
});

test("merging goes on across a flush (the tail row is updated in place)", async () => {
  const journal = new Journal(inMemory());
  journal.append("s", text("agent_message_chunk", "a"));
  await journal.flush();
  journal.append("s", text("agent_message_chunk", "b"));
  assert.deepEqual(await journal.entries("s"), [text("agent_message_chunk", "ab")]);
});

test("a run of chunks stops merging at the merge bound and goes on in a new entry (regression: a flood rewrote one growing row on every flush, O(n²))", async () => {
  const store = inMemory();
  const journal = new Journal(store, { mergeChars: 10 });
  for (const word of ["abcd", "efgh", "ij", "klmn"]) {
    journal.append("s", text("agent_message_chunk", word));
    await journal.flush();
  }
  assert.deepEqual(await stored(journal, store, "s"), [text("agent_message_chunk", "abcdefghij"), text("agent_message_chunk", "klmn")]);
  // A replay merges the message whole.
  assert.deepEqual(await journal.entries("s"), [text("agent_message_chunk", "abcdefghijklmn")]);
});

test("past the entry bound, the oldest entries go", async () => {
  const store = inMemory();
  const journal = new Journal(store, { maxEntries: 3 });
  for (let i = 0; i < 5; i++) journal.append("s", { sessionUpdate: "plan", entries: [], n: i } as unknown as SessionUpdate);
  const kept = (await stored(journal, store, "s")) as unknown as Array<{ n: number }>;
  assert.deepEqual(kept.map((e) => e.n), [2, 3, 4]);
});

test("past the byte bound, the oldest entries go; the newest always stays", async () => {
  const store = inMemory();
  const journal = new Journal(store, { maxBytes: 300 });
  for (let i = 0; i < 10; i++) journal.append("s", { sessionUpdate: "plan", entries: [], pad: "x".repeat(80), n: i } as unknown as SessionUpdate);
  const kept = (await stored(journal, store, "s")) as unknown as Array<{ n: number }>;
  assert.ok(kept.length >= 1 && kept.length <= 3, `kept ${kept.length}`);
  assert.equal(kept.at(-1)?.n, 9);
  journal.append("big", { sessionUpdate: "plan", entries: [], pad: "y".repeat(1000) } as unknown as SessionUpdate);
  assert.equal((await stored(journal, store, "big")).length, 1, "an entry larger than the bound is kept alone");
});

test("sessions and journals survive a reopen of the store; deleteSession removes both", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-journal-"));
  try {
    const file = join(dir, "s.sqlite");
    let db = openStore(file);
    let journal = new Journal(new SqliteSessionStore(db, "local"));
    await journal.saveSession({ id: "s1", agent: "a", cwd: dir, roots: [dir], mcpServers: [], ownerId: "o", ownerLabel: "o", createdAt: 1, updatedAt: 2 });
    journal.append("s1", text("user_message_chunk", "hi"));
    await journal.flush();
    db.close();
    db = openStore(file);
    journal = new Journal(new SqliteSessionStore(db, "local"));
    assert.deepEqual((await journal.loadSessions()).map((r) => r.id), ["s1"]);
    assert.deepEqual(await journal.entries("s1"), [text("user_message_chunk", "hi")]);
    await journal.deleteSession("s1");
    assert.deepEqual(await journal.loadSessions(), []);
    assert.deepEqual(await journal.entries("s1"), []);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("regression: after the hub closed the journal, an update no longer schedules a write that fails on the closed store and is retried forever (the process never exited)", async () => {
  const db = openStore(":memory:");
  const journal = new Journal(new SqliteSessionStore(db, "local"));
  journal.append("s", text("agent_message_chunk", "before"));
  await journal.close();
  db.close();
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  const before = timers();
  journal.append("s", text("agent_message_chunk", "after the close"));
  assert.equal(timers(), before, "nothing scheduled after close");
  await journal.flush();
});

test("a session's journal leaves memory when the session is deleted or handed over to another node", async () => {
  const journal = new Journal(inMemory());
  journal.append("deleted", text("agent_message_chunk", "a"));
  journal.append("handed-over", text("agent_message_chunk", "b"));
  journal.append("stays", text("agent_message_chunk", "c"));
  assert.equal(journal.sessionsInMemory, 3);
  await journal.deleteSession("deleted");
  // Pending when handed over: written first, then gone from memory.
  await journal.release("handed-over");
  assert.equal(journal.sessionsInMemory, 1);
  assert.deepEqual(await journal.entries("handed-over"), [text("agent_message_chunk", "b")], "the store keeps what was handed over");
  assert.deepEqual(await journal.entries("deleted"), []);
  assert.deepEqual(await journal.entries("stays"), [text("agent_message_chunk", "c")]);
});

test("journals held in memory are bounded: past the bound the idle ones go, the ones with writes pending stay", async () => {
  const store = inMemory();
  const journal = new Journal(store, { maxInMemory: 3 });
  for (let i = 0; i < 10; i++) {
    journal.append(`s${i}`, text("agent_message_chunk", `written ${i}`));
    await journal.flush();
    assert.ok(journal.sessionsInMemory <= 3, `${journal.sessionsInMemory} journals in memory`);
  }
  // Nothing written yet: none of them may go.
  for (let i = 10; i < 15; i++) journal.append(`s${i}`, text("agent_message_chunk", `pending ${i}`));
  assert.equal(journal.sessionsInMemory, 5);
  for (let i = 0; i < 15; i++) assert.equal((await journal.entries(`s${i}`)).length, 1, `s${i} is in the store`);
  // A session that left memory goes on in a new entry; the replay shows the same text.
  journal.append("s0", text("agent_message_chunk", " more"));
  assert.deepEqual(await stored(journal, store, "s0"), [text("agent_message_chunk", "written 0"), text("agent_message_chunk", " more")]);
  assert.deepEqual(await journal.entries("s0"), [text("agent_message_chunk", "written 0 more")]);
});

test("a history read holds what was appended before the call and nothing after, even when a write lands while the store is read", async () => {
  const store = inMemory();
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const gated = new Proxy(store, {
    get(target, property) {
      if (property === "journal") return async (sessionId: string) => (await gate, target.journal(sessionId));
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const journal = new Journal(gated);
  journal.append("s", text("agent_message_chunk", "before"));
  const history = journal.entries("s");
  journal.append("s", { sessionUpdate: "plan", entries: [] } as SessionUpdate);
  const later = journal.flush();
  openGate();
  assert.deepEqual(await history, [text("agent_message_chunk", "before")]);
  await later;
  assert.deepEqual(await journal.entries("s"), [text("agent_message_chunk", "before"), { sessionUpdate: "plan", entries: [] }]);
});

test("text chunks never merge across a turn's end, a settled permission, or two messages", async () => {
  const journal = new Journal(inMemory());
  const user = (t: string, messageId: string) => ({ sessionUpdate: "user_message_chunk", content: { type: "text", text: t }, messageId }) as SessionUpdate;
  const turnEnd = markUpdate({ turnEnd: { stopReason: "cancelled" } });
  const permission = markUpdate({
    permission: { toolCall: { toolCallId: "t1", title: "Edit" }, options: [{ optionId: "ok", name: "OK", kind: "allow_once" }], outcome: { outcome: "selected", optionId: "ok" }, settledBy: "client" },
  });
  journal.append("s", user("wait", "m1"));
  journal.append("s", turnEnd);
  journal.append("s", user("after", "m2"));
  journal.append("s", user("-cancel", "m2"));
  journal.append("s", user("another prompt", "m3"));
  journal.append("s", text("agent_message_chunk", "before"));
  journal.append("s", permission);
  journal.append("s", text("agent_message_chunk", "after"));
  assert.deepEqual(await journal.entries("s"), [
    user("wait", "m1"),
    turnEnd,
    user("after-cancel", "m2"),
    user("another prompt", "m3"),
    text("agent_message_chunk", "before"),
    permission,
    text("agent_message_chunk", "after"),
  ]);
});
