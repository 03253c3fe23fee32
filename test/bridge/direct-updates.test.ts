// DirectUpdates: which updates go ahead of the agent's connection, as a table
// of what the reader reads and what the connection dispatches.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Message } from "vscode-jsonrpc/node";
import { DirectUpdates } from "../../sidecar/bridge/direct-updates.ts";

const UPDATE = { jsonrpc: "2.0", method: "session/update", params: {} } as Message;
const REQUEST = { jsonrpc: "2.0", id: 1, method: "session/request_permission", params: {} } as Message;
const ANSWER = { jsonrpc: "2.0", id: 7, result: {} } as Message;
const CANCEL = { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } } as Message;

type Step = ["read", Message, "handled here" | "to the connection"] | ["dispatched"] | ["disposed"];

const cases: Array<{ name: string; steps: Step[] }> = [
  { name: "an update while the connection holds nothing goes ahead", steps: [["read", UPDATE, "handled here"], ["read", UPDATE, "handled here"]] },
  { name: "what is not an update goes to the connection", steps: [["read", REQUEST, "to the connection"], ["dispatched"], ["read", CANCEL, "to the connection"], ["dispatched"], ["read", ANSWER, "to the connection"]] },
  { name: "an update after a request it holds waits in line", steps: [["read", REQUEST, "to the connection"], ["read", UPDATE, "to the connection"]] },
  { name: "an update after an answer it holds waits in line", steps: [["read", ANSWER, "to the connection"], ["read", UPDATE, "to the connection"]] },
  {
    name: "once the connection dispatched all it held, updates go ahead again",
    steps: [["read", ANSWER, "to the connection"], ["read", UPDATE, "to the connection"], ["dispatched"], ["read", UPDATE, "to the connection"], ["dispatched"], ["dispatched"], ["read", UPDATE, "handled here"]],
  },
  { name: "after the connection is disposed nothing goes ahead", steps: [["disposed"], ["read", UPDATE, "to the connection"]] },
];

for (const { name, steps } of cases) {
  test(name, () => {
    const handled: Message[] = [];
    const direct = new DirectUpdates((m) => Message.isNotification(m) && m.method === "session/update", (m) => handled.push(m));
    let expectedHandled = 0;
    for (const [i, step] of steps.entries()) {
      if (step[0] === "dispatched") direct.dispatched();
      else if (step[0] === "disposed") direct.close();
      else {
        const taken = direct.take(step[1]);
        assert.equal(taken ? "handled here" : "to the connection", step[2], `step ${i + 1}`);
        if (taken) expectedHandled++;
      }
    }
    assert.equal(handled.length, expectedHandled);
  });
}
