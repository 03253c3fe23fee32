// Replay compaction (sidecar/hub/compaction.ts): its rules one by one, then
// the property that matters (design: third wave, decision 4): for random
// histories, what the session view shows of the compacted history equals what
// it shows of the history as it came (test/helpers/view-model.ts follows the
// view's rules; test/web/compaction-view.test.ts checks the real view), no
// turn's end, permission outcome or tool call's final state is lost, and
// compacting again, or a turn in parts then whole, changes nothing shown.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { markUpdate, readMark } from "../../protocol/history.ts";
import { compactHistory } from "../../sidecar/hub/compaction.ts";
import { randomHistory } from "../helpers/random-history.ts";
import { seeded } from "../helpers/seeded-random.ts";
import { drawHistory, toolStates } from "../helpers/view-model.ts";

const chunk = (text: string, messageId?: string | null, sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" = "agent_message_chunk"): SessionUpdate =>
  ({ sessionUpdate, content: { type: "text", text }, ...(messageId === undefined ? {} : { messageId }) }) as SessionUpdate;
const plan = (...steps: string[]): SessionUpdate => ({ sessionUpdate: "plan", entries: steps.map((content) => ({ content, priority: "medium", status: "pending" })) });
const turnEnd = markUpdate({ turnEnd: { stopReason: "end_turn" } });
const permission = markUpdate({
  permission: { toolCall: { toolCallId: "p1", title: "Edit" }, options: [{ optionId: "ok", name: "OK", kind: "allow_once" }], outcome: { outcome: "selected", optionId: "ok" }, settledBy: "client" },
});

describe("compaction rules", () => {
  test("a tool call's updates fold into its first update, each field the latest one set; null and absent fields change nothing", () => {
    const history: SessionUpdate[] = [
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.ts", kind: "read", status: "pending", locations: [{ path: "a.ts" }], _meta: { vendor: { name: "Read" } } },
      chunk("between"),
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress", title: null, content: [{ type: "content", content: { type: "text", text: "1" } }] },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: [{ type: "diff", path: "a.ts", oldText: "a", newText: "b" }], locations: null, rawOutput: { ok: true }, _meta: { other: 1 } },
    ];
    assert.deepEqual(compactHistory(history), [
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.ts", kind: "read", status: "completed", locations: [{ path: "a.ts" }], content: [{ type: "diff", path: "a.ts", oldText: "a", newText: "b" }], rawOutput: { ok: true }, _meta: { vendor: { name: "Read" }, other: 1 } },
      chunk("between"),
    ]);
    assert.equal(history[0]!.sessionUpdate === "tool_call" && history[0]!.status, "pending", "the updates given are not changed");
  });

  test("a tool call first named by an update keeps that update's kind; a later tool_call of the id folds into it", () => {
    assert.deepEqual(
      compactHistory([
        { sessionUpdate: "tool_call_update", toolCallId: "t9", status: "in_progress" },
        { sessionUpdate: "tool_call", toolCallId: "t9", title: "Run", status: "completed" },
      ]),
      [{ sessionUpdate: "tool_call_update", toolCallId: "t9", status: "completed", title: "Run" }],
    );
  });

  test("a plan keeps only its latest version of the turn, where it was sent; each turn keeps its own", () => {
    assert.deepEqual(compactHistory([plan("a"), chunk("x", "m"), plan("a", "b"), chunk("y", "m"), plan("a", "b", "c"), turnEnd, plan("z"), plan("z", "y")]), [
      chunk("xy", "m"),
      plan("a", "b", "c"),
      turnEnd,
      plan("z", "y"),
    ]);
  });

  test("a message's chunks merge whole, beyond the journal's merge bound, but never across a turn's end, a permission, another message or a tool call", () => {
    const long = "x".repeat(20_000);
    // Each of these is cut off from the chunk before it, so all stay as they came (made anew for each side).
    const apart = (): SessionUpdate[] => [
      chunk("other", "m2"),
      chunk("thinking", "m2", "agent_thought_chunk"),
      permission,
      chunk("after", "m2"),
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run" },
      chunk(" more", "m2"),
      turnEnd,
      chunk("next turn", "m2"),
    ];
    assert.deepEqual(compactHistory([chunk("Hel", "m1"), chunk("lo", "m1"), chunk(long, "m1"), ...apart()]), [chunk(`Hello${long}`, "m1"), ...apart()]);
  });

  test("chunks around a folded tool call update or a superseded plan merge, as the view drew them as one message", () => {
    const history: SessionUpdate[] = [
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run" },
      plan("a"),
      chunk("one ", null),
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" },
      chunk("two ", null),
      plan("a", "b"),
      chunk("three"),
    ];
    assert.deepEqual(compactHistory(history), [{ sessionUpdate: "tool_call", toolCallId: "t1", title: "Run", status: "completed" }, chunk("one two ", null), plan("a", "b"), chunk("three")]);
    assert.deepEqual(drawHistory(compactHistory(history)), drawHistory(history));
  });

  test("a merged message stops at the replay's merge bound and goes on in a new update", () => {
    assert.deepEqual(compactHistory([chunk("abcd", "m"), chunk("efgh", "m"), chunk("ij", "m")], 8), [chunk("abcdefgh", "m"), chunk("ij", "m")]);
  });

  test("a tool call's updates in a later turn stay in that turn", () => {
    const history: SessionUpdate[] = [
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run", status: "in_progress" },
      turnEnd,
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed" },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", content: [] },
    ];
    assert.deepEqual(compactHistory(history), [history[0], turnEnd, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed", content: [] }]);
  });

  test("marks, notices, mode, commands, title, usage and unknown updates stay where they were", () => {
    const history = [
      chunk("a"),
      permission,
      { sessionUpdate: "notice", severity: "info", title: "n" },
      { sessionUpdate: "current_mode_update", currentModeId: "code" },
      { sessionUpdate: "available_commands_update", availableCommands: [] },
      { sessionUpdate: "session_info_update", title: "T" },
      { sessionUpdate: "usage_update", used: 1, size: 2 },
      { sessionUpdate: "future_kind", anything: 1 },
      { sessionUpdate: "tool_call_update" },
      { sessionUpdate: "plan", entries: "not a list" },
      { sessionUpdate: "plan", entries: [] },
      turnEnd,
    ] as unknown as SessionUpdate[];
    assert.deepEqual(compactHistory(history), history);
  });
});

describe("compaction shows what the live view showed (property)", () => {
  const CASES = 1_500;

  test(`${CASES} random histories: the view of the compacted history equals the view of the history as it came, with every turn's end, permission outcome and tool call's final state`, () => {
    let before = 0;
    let after = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const history = randomHistory(seeded(seed), { turns: 1 + (seed % 5), steps: 80, openEnd: true });
      const compacted = compactHistory(history);
      const live = drawHistory(history);
      const replayed = drawHistory(compacted);
      assert.deepEqual(replayed, live, `seed ${seed}`);
      // Spelled out, though the model holds them: what must never be lost.
      assert.deepEqual(compacted.map(readMark).filter((m) => m !== undefined), history.map(readMark).filter((m) => m !== undefined), `marks, seed ${seed}`);
      assert.deepEqual(toolStates(replayed), toolStates(live), `tool calls, seed ${seed}`);
      assert.deepEqual(replayed.plansAtTurnEnds, live.plansAtTurnEnds, `plan per turn, seed ${seed}`);
      assert.ok(compacted.length <= history.length, `seed ${seed}`);
      before += history.length;
      after += compacted.length;
    }
    assert.ok(after < before * 0.8, `compacted to ${after} of ${before} updates`);
  });

  test("compacting again changes nothing; a turn compacted in parts, then whole, shows the same as compacted whole", () => {
    for (let seed = 1; seed <= 500; seed++) {
      const random = seeded(seed);
      const history = randomHistory(random, { turns: 3, steps: 60, openEnd: true });
      const compacted = compactHistory(history);
      assert.deepEqual(compactHistory(compacted), compacted, `seed ${seed}`);
      const cut = Math.floor(random() * (history.length + 1));
      const inParts = compactHistory([...compactHistory(history.slice(0, cut)), ...history.slice(cut)]);
      assert.deepEqual(drawHistory(inParts), drawHistory(history), `seed ${seed}, cut at ${cut}`);
    }
  });
});
