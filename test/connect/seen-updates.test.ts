// Recognising a replay (after a reconnect's session/load) as what the editor
// has already been shown, when the server replays it differently from how it
// went out live. One case per way a replay can differ.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SeenUpdates } from "../../client/seen-updates.ts";

const S = "sess-1";
const chunk = (kind: string, text: string) => ({ sessionId: S, update: { sessionUpdate: kind, content: { type: "text", text } } });
const say = (text: string) => chunk("agent_message_chunk", text);
const think = (text: string) => chunk("agent_thought_chunk", text);
const user = (text: string) => chunk("user_message_chunk", text);
const tool = (id: string, status: string) => ({ sessionId: S, update: { sessionUpdate: "tool_call_update", toolCallId: id, status } });

function seenOf(...live: unknown[]): SeenUpdates {
  const seen = new SeenUpdates();
  for (const p of live) seen.remember(p);
  return seen;
}

/** Which replayed updates would be forwarded (not seen), as a filter that stops at the first new one would. */
function forwarded(seen: SeenUpdates, replay: unknown[]): unknown[] {
  const filter = seen.replay();
  let active = true;
  const out: unknown[] = [];
  for (const p of replay) {
    if (!active) {
      out.push(p);
      continue;
    }
    const rest = filter.pass(p);
    if (rest === undefined) {
      if (filter.done) active = false;
      continue;
    }
    active = false;
    out.push(rest);
  }
  return out;
}

describe("a replay is recognised", () => {
  test("replayed exactly as it went out", () => {
    const live = [say("hel"), say("lo"), tool("t1", "completed")];
    assert.deepEqual(forwarded(seenOf(...live), live), []);
  });

  test("consecutive text chunks merged into one", () => {
    assert.deepEqual(forwarded(seenOf(say("hel"), say("lo"), say(" world")), [say("hello world")]), []);
  });

  test("text chunks split at other places", () => {
    assert.deepEqual(forwarded(seenOf(say("hello"), say(" world")), [say("hel"), say("lo w"), say("orld")]), []);
  });

  test("thoughts and messages matched each against its own kind", () => {
    assert.deepEqual(forwarded(seenOf(think("hmm"), say("ok")), [think("hmm"), say("ok")]), []);
    assert.equal(forwarded(seenOf(think("hmm")), [say("hmm")]).length, 1, "a thought is not a message");
  });

  test("the server dropped its oldest entries", () => {
    assert.deepEqual(forwarded(seenOf(say("first "), say("second "), say("third")), [say("third")]), []);
  });

  test("the user's prompts, echoed live or not", () => {
    assert.deepEqual(forwarded(seenOf(say("answer")), [user("question"), say("answer")]), []);
  });

  test("an update seen once and replayed twice is new the second time", () => {
    assert.equal(forwarded(seenOf(tool("t1", "completed")), [tool("t1", "completed"), tool("t1", "completed")]).length, 1);
  });
});

describe("what the editor has not seen is forwarded", () => {
  test("what the agent said while the editor was away, after the seen part", () => {
    assert.deepEqual(forwarded(seenOf(say("before")), [say("before"), say("while away")]), [say("while away")]);
  });

  test("only the new end of a chunk that merged what the editor saw with what came while it was away", () => {
    assert.deepEqual(forwarded(seenOf(say("hel")), [say("hello"), say(" there")]), [say("lo"), say(" there")]);
  });

  test("a tool call the editor never saw", () => {
    assert.deepEqual(forwarded(seenOf(say("a")), [say("a"), tool("t9", "completed")]), [tool("t9", "completed")]);
  });

  test("a session the editor was shown nothing of is empty: its replay gets no filter, all of it is new", () => {
    const seen = new SeenUpdates();
    assert.equal(seen.empty, true);
    seen.remember(say("x"));
    assert.equal(seen.empty, false);
  });
});
