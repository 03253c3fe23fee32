// The permission panel's tool call details (extension/permissions/tool-calls.ts):
// a request that carries only the tool call's id shows what the session's
// updates said about it; what the request does carry wins.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { ToolCallIndex } from "../../extension/permissions/tool-calls.ts";
import { DEFAULT_EDITOR_KNOWN_TOOL_CALLS } from "../../extension/limits.ts";

const diff = { type: "diff" as const, path: "/w/a.md", oldText: null, newText: "hello\n" };

function toolCall(sessionId: string, toolCallId: string, title = "Create a.md"): SessionNotification {
  return { sessionId, update: { sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", content: [diff] } };
}

describe("tool call details for permission requests", () => {
  it("a request with only the id | gets the title, kind and diff of the session's tool_call", () => {
    const index = new ToolCallIndex();
    index.observe(toolCall("s1", "t1"));
    assert.deepEqual(index.complete("s1", { toolCallId: "t1" }), { toolCallId: "t1", title: "Create a.md", kind: "edit", status: "pending", content: [diff] });
  });

  it("a tool_call_update | changes only the fields it carries", () => {
    const index = new ToolCallIndex();
    index.observe(toolCall("s1", "t1"));
    index.observe({ sessionId: "s1", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress", title: null } });
    const call = index.complete("s1", { toolCallId: "t1" });
    assert.equal(call.status, "in_progress");
    assert.equal(call.title, "Create a.md");
  });

  it("what the request carries | wins over what is known", () => {
    const index = new ToolCallIndex();
    index.observe(toolCall("s1", "t1"));
    assert.equal(index.complete("s1", { toolCallId: "t1", title: "Overwrite a.md" }).title, "Overwrite a.md");
  });

  it("the same tool call id in another session | is another tool call", () => {
    const index = new ToolCallIndex();
    index.observe(toolCall("s1", "t1"));
    assert.deepEqual(index.complete("s2", { toolCallId: "t1" }), { toolCallId: "t1" });
  });

  it(`more than DEFAULT_EDITOR_KNOWN_TOOL_CALLS (${DEFAULT_EDITOR_KNOWN_TOOL_CALLS}) | the oldest is forgotten`, () => {
    const index = new ToolCallIndex();
    for (let i = 0; i <= DEFAULT_EDITOR_KNOWN_TOOL_CALLS; i++) index.observe(toolCall("s1", `t${i}`));
    assert.deepEqual(index.complete("s1", { toolCallId: "t0" }), { toolCallId: "t0" });
    assert.equal(index.complete("s1", { toolCallId: "t1" }).title, "Create a.md");
  });
});
