// Rows of the session directory, the journals and the homes.
import assert from "node:assert/strict";
import type { SessionRecord } from "../../sidecar/store/shared-store.ts";
import type { Row } from "./harness.ts";

export function record(id: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    agent: "demo",
    cwd: "/work/project",
    roots: ["/work/project", "/work/lib"],
    mcpServers: [{ name: "files", command: "mcp-files", args: [], env: [] }],
    ownerId: "person-1",
    ownerLabel: "Person One",
    createdAt: 1_000,
    updatedAt: 2_000,
    ...extra,
  };
}

const BIG = { maxEntries: 1_000, maxBytes: 1_000_000 };

export const sessionRows: Row[] = [
  {
    name: "sessions: save, get and all from any node; save again updates; delete takes the record and its journal",
    async run({ a, b }) {
      await a.sessions.save(record("s1"));
      await a.sessions.save(record("s2", { title: "second", agentSessionId: "agent-2" }));
      assert.deepEqual(await b.sessions.get("s1"), record("s1"));
      assert.deepEqual(await b.sessions.get("s2"), record("s2", { title: "second", agentSessionId: "agent-2" }));
      assert.equal(await b.sessions.get("unknown"), undefined);
      const ids = (await b.sessions.all()).map((r) => r.id).sort();
      assert.deepEqual(ids, ["s1", "s2"]);

      await b.sessions.save(record("s1", { title: "renamed", updatedAt: 3_000 }));
      assert.deepEqual(await a.sessions.get("s1"), record("s1", { title: "renamed", updatedAt: 3_000 }));
      assert.equal((await a.sessions.all()).length, 2);

      await a.sessions.writeJournal([{ sessionId: "s1", append: ["one"] }], BIG);
      await b.sessions.delete("s1");
      assert.equal(await a.sessions.get("s1"), undefined);
      assert.deepEqual(await a.sessions.journal("s1"), []);
      assert.deepEqual((await a.sessions.all()).map((r) => r.id), ["s2"]);
      await a.sessions.delete("never-there");
    },
  },
  {
    name: "sessions: create stores an id once: of several nodes creating one id at once exactly one gets it, and its record stays",
    async run({ a, b, open }) {
      const c = await open("node-c");
      const nodes = [a, b, c];
      const created = await Promise.all(nodes.map((n, i) => n.sessions.create(record("s1", { ownerId: `person-${i}` }))));
      assert.equal(created.filter(Boolean).length, 1, `one create of three wins: ${created}`);
      const winner = created.indexOf(true);
      assert.equal((await b.sessions.get("s1"))?.ownerId, `person-${winner}`);
      assert.deepEqual((await a.sessions.all()).map((r) => r.id), ["s1"]);
      assert.equal(await a.sessions.create(record("s1", { ownerId: `person-${winner}` })), false, "taken, whoever asks");
      assert.equal(await a.sessions.create(record("s2")), true);
      await a.sessions.delete("s1");
      assert.equal(await b.sessions.create(record("s1")), true, "free again once deleted");
    },
  },
  {
    name: "sessions: save never overwrites another person's record; the owner's own saves go through",
    async run({ a, b }) {
      assert.equal(await a.sessions.create(record("s1", { ownerId: "alice", title: "alice's plans" })), true);
      assert.equal(await b.sessions.save(record("s1", { ownerId: "bob", title: "bob's" })), false);
      assert.deepEqual(await a.sessions.get("s1"), record("s1", { ownerId: "alice", title: "alice's plans" }));
      assert.equal(await b.sessions.save(record("s1", { ownerId: "alice", title: "renamed" })), true);
      assert.equal((await a.sessions.get("s1"))?.title, "renamed");
      assert.equal(await b.sessions.save(record("s2", { ownerId: "bob" })), true, "a record not stored yet is written");
    },
  },
  {
    name: "journal: entries appended in order, replaceLast rewrites the newest, several sessions in one write",
    async run({ a, b }) {
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["e1", "e2"] }], BIG);
      await b.sessions.writeJournal(
        [
          { sessionId: "s1", replaceLast: "e2 grown", append: ["e3"] },
          { sessionId: "s2", append: ["f1"] },
        ],
        BIG,
      );
      assert.deepEqual(await a.sessions.journal("s1"), ["e1", "e2 grown", "e3"]);
      assert.deepEqual(await a.sessions.journal("s2"), ["f1"]);
      await a.sessions.writeJournal([{ sessionId: "s1", replaceLast: "e3 grown", append: [] }], BIG);
      assert.deepEqual(await b.sessions.journal("s1"), ["e1", "e2 grown", "e3 grown"]);
      await a.sessions.writeJournal([], BIG);
    },
  },
  {
    name: "journal: trimmed by entries, the oldest first",
    async run({ a, b }) {
      const bounds = { maxEntries: 3, maxBytes: 1_000_000 };
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["1", "2", "3", "4", "5"] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["3", "4", "5"]);
      await b.sessions.writeJournal([{ sessionId: "s1", append: ["6"] }], bounds);
      await a.sessions.writeJournal([{ sessionId: "s1", replaceLast: "6b", append: ["7"] }], bounds);
      assert.deepEqual(await b.sessions.journal("s1"), ["5", "6b", "7"]);
    },
  },
  {
    name: "journal: trimmed by bytes (UTF-8), counting rewrites of the newest entry; the newest always stays",
    async run({ a, b }) {
      const bounds = { maxEntries: 1_000, maxBytes: 10 };
      // "éé" is 2 characters and 4 bytes: three of them are 12 bytes, above the bound.
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["éé", "bbbb", "cccc"] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["bbbb", "cccc"]);
      await b.sessions.writeJournal([{ sessionId: "s1", replaceLast: "cccccc", append: [] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["bbbb", "cccccc"], "10 bytes: within the bound");
      await a.sessions.writeJournal([{ sessionId: "s1", replaceLast: "ccccccc", append: [] }], bounds);
      assert.deepEqual(await b.sessions.journal("s1"), ["ccccccc"], "11 bytes: the oldest goes");
      await b.sessions.writeJournal([{ sessionId: "s1", append: ["x".repeat(25)] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["x".repeat(25)], "the newest stays even above the bound");
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["dd"] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["dd"]);
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["eeee", "ffff"] }], bounds);
      assert.deepEqual(await b.sessions.journal("s1"), ["dd", "eeee", "ffff"], "10 bytes after the big entry went: the counter followed");
    },
  },
  {
    name: "journal: the tail is the newest entries, oldest first; dropLast removes the newest before the rest of the write (a compacted turn replaces them), and the byte bound counts what is left",
    async run({ a, b }) {
      const bounds = { maxEntries: 1_000, maxBytes: 12 };
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["aa", "bb", "cc", "dd"] }], bounds);
      assert.deepEqual(await b.sessions.journalTail("s1", 3), ["bb", "cc", "dd"]);
      assert.deepEqual(await b.sessions.journalTail("s1", 10), ["aa", "bb", "cc", "dd"], "all, when fewer are stored");
      assert.deepEqual(await b.sessions.journalTail("s1", 0), []);
      assert.deepEqual(await b.sessions.journalTail("unknown", 2), []);
      await b.sessions.writeJournal([{ sessionId: "s1", dropLast: 3, append: ["bcd", "ee"] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["aa", "bcd", "ee"]);
      await a.sessions.writeJournal([{ sessionId: "s1", dropLast: 1, replaceLast: "BCD", append: ["ffff"] }], bounds);
      assert.deepEqual(await b.sessions.journal("s1"), ["aa", "BCD", "ffff"]);
      await a.sessions.writeJournal([{ sessionId: "s1", append: ["gggg"] }], bounds);
      // Had the dropped entries still been counted, more would have gone.
      assert.deepEqual(await b.sessions.journal("s1"), ["BCD", "ffff", "gggg"], "13 bytes: the oldest went");
      await b.sessions.writeJournal([{ sessionId: "s1", dropLast: 10, append: ["h"] }], bounds);
      assert.deepEqual(await a.sessions.journal("s1"), ["h"], "dropping more than is stored empties the journal first");
    },
  },
  {
    name: "journal: the journal of an unknown session is []; replaceLast on an empty journal writes nothing",
    async run({ a }) {
      assert.deepEqual(await a.sessions.journal("unknown"), []);
      await a.sessions.writeJournal([{ sessionId: "empty", replaceLast: "lost", append: [] }], BIG);
      assert.deepEqual(await a.sessions.journal("empty"), []);
    },
  },
  {
    name: "homes: a session claimed by its node has that node as its home; an unknown session has none",
    async run({ a }) {
      await a.sessions.save(record("s1"));
      assert.equal(await a.sessions.claimHome("s1", a.nodeId, undefined), true);
      assert.equal(await a.sessions.home("s1"), a.nodeId);
      assert.equal(await a.sessions.home("unknown"), undefined);
      await a.sessions.delete("s1");
      assert.equal(await a.sessions.home("s1"), undefined);
    },
  },
  {
    name: "homes: two nodes race to claim one session, exactly one wins; a take-over names the home it replaces",
    cluster: true,
    async run({ a, b, open }) {
      await a.sessions.save(record("s1"));
      const c = await open("node-c");
      const nodes = [a, b, c];
      const claims = await Promise.all(nodes.flatMap((n) => [n.sessions.claimHome("s1", n.nodeId, undefined), n.sessions.claimHome("s1", n.nodeId, undefined)]));
      const winners = nodes.filter((_, i) => claims[2 * i] || claims[2 * i + 1]);
      assert.equal(claims.filter(Boolean).length, 1, `one claim of six wins: ${claims}`);
      const winner = winners[0]!;
      const loser = nodes.find((n) => n !== winner)!;
      assert.equal(await loser.sessions.home("s1"), winner.nodeId);

      assert.equal(await loser.sessions.claimHome("s1", loser.nodeId, "node-gone"), false, "the home is not the one expected");
      assert.equal(await loser.sessions.claimHome("s1", loser.nodeId, winner.nodeId), true, "a take-over from the home it saw");
      assert.equal(await winner.sessions.home("s1"), loser.nodeId);
      assert.equal(await winner.sessions.claimHome("unknown", winner.nodeId, undefined), false, "no session, nothing to claim");
      assert.equal(await winner.sessions.home("unknown"), undefined);
    },
  },
  {
    name: "homes: release gives the session up only when the node is still its home",
    cluster: true,
    async run({ a, b }) {
      await a.sessions.save(record("s1"));
      assert.equal(await a.sessions.claimHome("s1", a.nodeId, undefined), true);
      await b.sessions.releaseHome("s1", b.nodeId);
      assert.equal(await a.sessions.home("s1"), a.nodeId, "another node's release changes nothing");
      await a.sessions.releaseHome("s1", a.nodeId);
      assert.equal(await b.sessions.home("s1"), undefined);
      assert.deepEqual(await b.sessions.get("s1"), record("s1"), "the record stays");
      assert.equal(await b.sessions.claimHome("s1", b.nodeId, undefined), true);
      assert.equal(await a.sessions.home("s1"), b.nodeId);
    },
  },
];
