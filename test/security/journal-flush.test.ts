// The journal's flush runs in a timer: an update it cannot serialize must not
// throw out of it, which would end the process with every session in it.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { Journal } from "../../sidecar/hub/journal.ts";
import { openStore } from "../../sidecar/store/store.ts";
import { SqliteSessionStore } from "../../sidecar/store/sqlite/sessions.ts";

const chunk = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }) as SessionUpdate;

/** An array `depth` deep: JSON.stringify overflows the stack on it. */
function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

test("an update 5,000 levels deep is logged and dropped by the journal's flush timer; the process stays up and the rest is written", async () => {
  const lines: string[] = [];
  let dropped: () => void = () => undefined;
  const loggedDrop = new Promise<void>((resolve) => (dropped = resolve));
  const journal = new Journal(new SqliteSessionStore(openStore(":memory:"), "local"), {
    flushMs: 1,
    log: (line) => {
      lines.push(line);
      if (line.includes("was dropped")) dropped();
    },
  });
  journal.append("s", chunk("before"));
  journal.append("s", { sessionUpdate: "plan", entries: [], deep: nested(5_000) } as unknown as SessionUpdate);
  journal.append("s", chunk("after"));
  // The flush timer runs on its own (1 ms); a throw out of it would end this process and fail the file.
  const deadline = setTimeout(() => dropped(), 10_000);
  await loggedDrop;
  clearTimeout(deadline);
  assert.match(lines.join("\n"), /journal: an update of session s was dropped, it cannot be serialized: Maximum call stack size exceeded/);
  // Both chunks are written (a replay shows them as one message, as a view drew them).
  assert.deepEqual(await journal.entries("s"), [chunk("beforeafter")]);
  // The journal goes on.
  journal.append("s", { sessionUpdate: "plan", entries: [] } as SessionUpdate);
  assert.deepEqual(await journal.entries("s"), [chunk("beforeafter"), { sessionUpdate: "plan", entries: [] }]);
  await journal.close();
});
