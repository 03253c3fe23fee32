// The server's requests to the editor across connections: ids rewritten from
// the second connection on, and back when the editor answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerRequestIds } from "../../client/server-request-ids.ts";

const ask = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "session/request_permission", params: { sessionId: "s1" } });
const withdraw = (requestId: number) => ({ jsonrpc: "2.0" as const, method: "$/cancel_request", params: { requestId } });

test("regression: after a reconnect the server's $/cancel_request named the server's id, not the one the editor was given", () => {
  const requests = new ServerRequestIds(100);
  const shown = requests.toEditor(ask(0), 2);
  assert.equal(shown.id, "acp-remote-connect/c2/0");
  assert.deepEqual(requests.cancelToEditor(withdraw(0), 2).params, { requestId: "acp-remote-connect/c2/0" });
  // The editor still answers the withdrawn request; the answer goes back under the server's id.
  assert.deepEqual(requests.fromEditor({ jsonrpc: "2.0", id: shown.id, error: { code: -32800, message: "cancelled" } }, 2), {
    response: { jsonrpc: "2.0", id: 0, error: { code: -32800, message: "cancelled" } },
  });
  assert.equal(requests.size, 0);
});

test("on the first connection ids pass unchanged, and so does a withdrawal", () => {
  const requests = new ServerRequestIds(100);
  assert.equal(requests.toEditor(ask(4), 1).id, 4);
  assert.deepEqual(requests.cancelToEditor(withdraw(4), 1).params, { requestId: 4 });
  assert.deepEqual(requests.cancelToEditor(withdraw(9), 1).params, { requestId: 9 }, "an unknown id passes as it is");
});

test("an answer to a request of a connection that is gone is stale; the lost connection's requests are cancelled", () => {
  const requests = new ServerRequestIds(100);
  requests.toEditor(ask(1), 1);
  assert.deepEqual(requests.cancelsFor(1).map((c) => c.params), [{ requestId: 1 }]);
  assert.deepEqual(requests.fromEditor({ jsonrpc: "2.0", id: 1, result: {} }, 2), { stale: true });
  assert.equal(requests.size, 0);
});

test("editors that never answer: at most max requests are kept", () => {
  const requests = new ServerRequestIds(3);
  for (let id = 0; id < 10; id++) requests.toEditor(ask(id), 2);
  assert.equal(requests.size, 3);
});
