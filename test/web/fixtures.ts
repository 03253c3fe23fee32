// Scripted session/update notifications of one turn, as an agent sends them.
import type { RequestPermissionRequest, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";

export const SESSION_ID = "sess-1";

export const n = (update: SessionUpdate): SessionNotification => ({ sessionId: SESSION_ID, update });

export const text = (t: string) => ({ type: "text" as const, text: t });

/** Splits `t` into chunks of `size` characters, as streamed text arrives. */
export function chunks(kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", t: string, size = 7): SessionNotification[] {
  const out: SessionNotification[] = [];
  for (let i = 0; i < t.length; i += size) out.push(n({ sessionUpdate: kind, content: text(t.slice(i, i + size)) }));
  return out;
}

export const AGENT_MARKDOWN = [
  "Here is the **fix** for `parse()`:",
  "",
  "```ts",
  "export function parse(s: string) {",
  "  return JSON.parse(s);",
  "}",
  "```",
  "",
  "- first point",
  "- see [the docs](https://example.com/docs)",
].join("\n");

export const TURN: SessionNotification[] = [
  n({ sessionUpdate: "user_message_chunk", content: text("Fix the parser please") }),
  ...chunks("agent_thought_chunk", "I should read parse.ts first."),
  n({
    sessionUpdate: "plan",
    entries: [
      { content: "Read parse.ts", priority: "high", status: "completed" },
      { content: "Fix the bug", priority: "high", status: "in_progress" },
      { content: "Run the tests", priority: "medium", status: "pending" },
    ],
  }),
  n({ sessionUpdate: "tool_call", toolCallId: "call-1", title: "Read src/parse.ts", kind: "read", status: "pending", locations: [{ path: "src/parse.ts", line: 3 }] }),
  n({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "completed", content: [{ type: "content", content: text("export function parse() {}") }] }),
  n({
    sessionUpdate: "tool_call",
    toolCallId: "call-2",
    title: "Edit src/parse.ts",
    kind: "edit",
    status: "in_progress",
    content: [{ type: "diff", path: "src/parse.ts", oldText: "line one\nold line\nline three", newText: "line one\nnew line\nline three" }],
  }),
  n({ sessionUpdate: "tool_call", toolCallId: "call-3", title: "npm test", kind: "execute", status: "in_progress", content: [{ type: "terminal", terminalId: "term-7" }] }),
  ...chunks("agent_message_chunk", AGENT_MARKDOWN),
];

export const PERMISSION: RequestPermissionRequest = {
  sessionId: SESSION_ID,
  toolCall: { toolCallId: "call-4", title: "Run rm -rf build", kind: "execute", status: "pending" },
  options: [
    { optionId: "allow", name: "Allow once", kind: "allow_once" },
    { optionId: "always", name: "Always allow", kind: "allow_always" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ],
};
