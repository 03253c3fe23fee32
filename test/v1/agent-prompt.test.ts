// How chat messages become the prompt of a one-shot agent turn, and how ACP
// stop reasons become finish reasons (docs/deferred.md, "Models and backends").
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FINISH_REASON, promptFromMessages } from "../../sidecar/v1/backends/agent.ts";
import type { ChatMessage } from "../../protocol/v1.ts";

const text = (t: string) => ({ type: "text" as const, text: t });

describe("messages → prompt blocks", () => {
  const rows: Array<[string, ChatMessage[], ReturnType<typeof text>[]]> = [
    ["a lone user message is exactly the prompt", [{ role: "user", content: "hello" }], [text("hello")]],
    [
      "system and developer messages lead, as they are",
      [
        { role: "system", content: "be brief" },
        { role: "developer", content: "use tabs" },
        { role: "user", content: "hello" },
      ],
      [text("be brief"), text("use tabs"), text("hello")],
    ],
    [
      "earlier turns become one labelled transcript before the last message",
      [
        { role: "user", content: "what is 2+2?" },
        { role: "assistant", content: "4" },
        { role: "tool", content: "{\"ok\":true}", name: "calc" },
        { role: "user", content: "and 3+3?" },
      ],
      [text("Conversation so far:\n\n[user]\nwhat is 2+2?\n\n[assistant]\n4\n\n[tool calc]\n{\"ok\":true}"), text("and 3+3?")],
    ],
    ["a last message that is not the user's keeps its label", [{ role: "assistant", content: "draft" }], [text("[assistant]\ndraft")]],
  ];
  for (const [name, messages, blocks] of rows) {
    it(name, () => assert.deepEqual(promptFromMessages(messages), blocks));
  }
});

describe("ACP stop reason → finish_reason", () => {
  it("end_turn → stop, max_tokens → length, max_turn_requests → length, refusal → content_filter, cancelled → stop", () => {
    assert.deepEqual(FINISH_REASON, { end_turn: "stop", max_tokens: "length", max_turn_requests: "length", refusal: "content_filter", cancelled: "stop" });
  });
});
