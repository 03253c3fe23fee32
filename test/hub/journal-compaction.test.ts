// The journal compacts each turn in the store once it ends (sidecar/hub/
// journal.ts), on the embedded store and on Redis: the store then holds what a
// replay sends, no more; what was stored after the turn's end in the same
// write stays and goes on merging; and for random histories written with
// flushes anywhere, what the store holds and what a replay sends show what the
// live view showed (test/helpers/view-model.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { endsTurn, markUpdate } from "../../protocol/history.ts";
import { chunkText, compactHistory } from "../../sidecar/hub/compaction.ts";
import { Journal } from "../../sidecar/hub/journal.ts";
import type { SessionStore } from "../../sidecar/store/shared-store.ts";
import { randomHistory } from "../helpers/random-history.ts";
import { seeded } from "../helpers/seeded-random.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { drawHistory } from "../helpers/view-model.ts";
import { type Implementation, redisImplementation, sqliteImplementation } from "../store/harness.ts";

const chunk = (text: string, messageId = "m1"): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId });
const turnEnd = markUpdate({ turnEnd: { stopReason: "end_turn" } });

async function stored(store: SessionStore, sessionId: string): Promise<SessionUpdate[]> {
  return (await store.journal(sessionId)).map((entry) => JSON.parse(entry) as SessionUpdate);
}

const bytes = (entries: readonly unknown[]): number => entries.reduce<number>((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);

function rows(implementation: Implementation, cases: number): void {
  /** Runs `steps` on the sessions of a fresh store, closed after. */
  const withFresh = async (steps: (store: SessionStore) => Promise<void>): Promise<void> => {
    const ctx = await implementation.fresh();
    try {
      await steps(ctx.a.sessions);
    } finally {
      await ctx.close();
    }
  };

  test("a turn's entries in the store are replaced by their compacted form once it ends: one entry per tool call, the turn's last plan; a replay merges a message whole", async () => {
    await withFresh(async (store) => {
      const journal = new Journal(store, { mergeChars: 4 });
      const live: SessionUpdate[] = [
        { sessionUpdate: "user_message_chunk", content: { type: "text", text: "go" }, messageId: "u1" },
        { sessionUpdate: "plan", entries: [{ content: "a", priority: "medium", status: "in_progress" }] },
        { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read", status: "pending" },
        { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" },
        chunk("abcd"),
        chunk("efgh"),
        { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: [{ type: "content", content: { type: "text", text: "ok" } }] },
        chunk("ij"),
        { sessionUpdate: "plan", entries: [{ content: "a", priority: "medium", status: "completed" }] },
        turnEnd,
      ];
      for (const update of live) {
        journal.append("s", update);
        await journal.flush();
      }
      // The message's chunks stay cut at the journal's merge bound (4 characters here) in the store.
      assert.deepEqual(await stored(store, "s"), compactHistory(live, 4));
      assert.deepEqual(
        (await stored(store, "s")).map((u) => u.sessionUpdate),
        ["user_message_chunk", "tool_call", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "plan", "session_info_update"],
      );
      const compacted = compactHistory(live);
      assert.deepEqual(await journal.entries("s"), compacted);
      assert.equal(compacted.length, 5, "prompt, tool call, message, plan, turn end");
      assert.deepEqual(drawHistory(compacted), drawHistory(live));
    });
  });

  test("what was stored after a turn's end in the same write stays as it was, and the next chunk still merges into it", async () => {
    await withFresh(async (store) => {
      const journal = new Journal(store);
      for (const update of [chunk("a"), chunk("b"), { sessionUpdate: "plan", entries: [] } as SessionUpdate, chunk("c"), turnEnd]) journal.append("s", update);
      await journal.flush();
      for (const update of [chunk("x", "m2"), chunk("y", "m2"), { sessionUpdate: "plan", entries: [] } as SessionUpdate, { sessionUpdate: "plan", entries: [] } as SessionUpdate, turnEnd, chunk("next", "m3")]) {
        journal.append("s", update);
      }
      await journal.flush();
      journal.append("s", chunk(" turn", "m3"));
      await journal.flush();
      assert.deepEqual(await stored(store, "s"), [
        chunk("ab"),
        { sessionUpdate: "plan", entries: [] },
        chunk("c"),
        turnEnd,
        chunk("xy", "m2"),
        { sessionUpdate: "plan", entries: [] },
        turnEnd,
        chunk("next turn", "m3"),
      ]);
    });
  });

  test("a journal that comes into memory in the middle of a turn (a restart) compacts the part of the turn it wrote; a replay compacts the whole", async () => {
    await withFresh(async (store) => {
      const first = new Journal(store);
      const head: SessionUpdate[] = [
        { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run", status: "pending" },
        { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" },
      ];
      for (const update of head) first.append("s", update);
      await first.close();
      const second = new Journal(store);
      const rest: SessionUpdate[] = [
        { sessionUpdate: "tool_call_update", toolCallId: "t1", content: [] },
        { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" },
        turnEnd,
      ];
      for (const update of rest) second.append("s", update);
      await second.flush();
      assert.deepEqual(await stored(store, "s"), [...head, { sessionUpdate: "tool_call_update", toolCallId: "t1", content: [], status: "completed" }, turnEnd]);
      assert.deepEqual(await second.entries("s"), [{ sessionUpdate: "tool_call", toolCallId: "t1", title: "Run", status: "completed", content: [] }, turnEnd]);
    });
  });

  test("a long turn is compacted in the store while it runs, so that its beginning is not trimmed to the journal's entry bound before it ends", async () => {
    await withFresh(async (store) => {
      const journal = new Journal(store, { maxEntries: 60, compactEntries: 10 });
      const prompt: SessionUpdate = { sessionUpdate: "user_message_chunk", content: { type: "text", text: "refactor everything" }, messageId: "u1" };
      journal.append("s", prompt);
      for (let i = 0; i < 40; i++) {
        journal.append("s", { sessionUpdate: "tool_call", toolCallId: `t${i}`, title: `Edit ${i}`, status: "pending" });
        await journal.flush();
        journal.append("s", { sessionUpdate: "tool_call_update", toolCallId: `t${i}`, status: "completed" });
        await journal.flush();
      }
      // 81 entries as they came: compacted in windows of 10 (a tool call cut by a window's edge keeps two), it fits.
      const inStore = await stored(store, "s");
      assert.deepEqual(inStore[0], prompt, "the turn's prompt is still there");
      assert.ok(inStore.length <= 50, `${inStore.length} entries`);
      assert.equal((await journal.entries("s")).length, 41, "the prompt and one update per tool call");
    });
  });

  test("a turn of text alone is not read back from the store when it ends: nothing in it folds (a flood of text is not written twice)", async () => {
    await withFresh(async (store) => {
      const tails: number[] = [];
      const watched = new Proxy(store, {
        get(target, property) {
          if (property === "journalTail") return (id: string, n: number) => (tails.push(n), target.journalTail(id, n));
          const value: unknown = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const journal = new Journal(watched, { mergeChars: 8, compactEntries: 4 });
      for (let i = 0; i < 40; i++) {
        journal.append("s", chunk(`text ${i} `));
        await journal.flush();
      }
      journal.append("s", { sessionUpdate: "plan", entries: [] });
      journal.append("s", turnEnd);
      await journal.flush();
      assert.deepEqual(tails, [], "nothing read back");
      journal.append("s", { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run" });
      journal.append("s", { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" });
      journal.append("s", turnEnd);
      await journal.flush();
      assert.deepEqual(tails, [3], "a turn with a tool call's update is compacted");
    });
  });

  test(`${cases} random histories written with flushes anywhere: the store and a replay show what the live view showed; once the last turn ended, the store holds the compacted history`, async () => {
    await withFresh(async (store) => {
      let raw = 0;
      let kept = 0;
      for (let seed = 1; seed <= cases; seed++) {
        const random = seeded(seed);
        const history = randomHistory(random, { turns: 1 + (seed % 4), steps: 60, openEnd: true });
        const journal = new Journal(store, { mergeChars: 1 + Math.floor(random() * 40), compactEntries: 2 + Math.floor(random() * 30) });
        const sessionId = `s${seed}`;
        for (const update of history) {
          journal.append(sessionId, update);
          if (random() < 0.3) await journal.flush();
        }
        await journal.flush();
        const inStore = await stored(store, sessionId);
        const replayed = await journal.entries(sessionId);
        const live = drawHistory(history);
        assert.deepEqual(drawHistory(inStore), live, `the store, seed ${seed}`);
        assert.deepEqual(drawHistory(replayed), live, `a replay, seed ${seed}`);
        assert.deepEqual(replayed, compactHistory(history), `a replay is the history compacted, seed ${seed}`);
        if (endsTurn(history.at(-1)!)) {
          // What is left to a replay is merging the chunks the journal's merge bound cut apart.
          const notChunks = (updates: SessionUpdate[]) => updates.filter((u) => chunkText(u) === undefined);
          assert.deepEqual(notChunks(inStore), notChunks(replayed), `the store is compacted, seed ${seed}`);
        }
        raw += bytes(history);
        kept += bytes(inStore);
      }
      assert.ok(kept < raw * 0.8, `the store keeps ${kept} of ${raw} bytes`);
    });
  });
}

describe("journal compaction: sqlite", () => {
  rows(sqliteImplementation, 200);
});

const installed = redisServerPath() !== undefined;

describe("journal compaction: redis", { skip: installed ? false : "redis-server is not installed" }, () => {
  let server: RedisServer | undefined;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.close();
  });
  rows(redisImplementation(() => server!), 40);
});
