// Server-to-client requests a Streamable HTTP connection remembers (to route
// their answers to the right session) are forgotten when they are answered or
// withdrawn with `$/cancel_request`, not kept for the connection's life.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { Acp } from "../../protocol/acp.ts";
import { HttpConnection } from "../../sidecar/acp/http-connection.ts";

const LIMITS = { maxQueuedMessages: 100_000, maxQueuedBytes: 64 * 1024 * 1024 };

/** A connection that ends with the test, pass or fail (its streams hold timers). */
function connection(t: TestContext): HttpConnection {
  const c = new HttpConnection({ connectionId: "c-1", principal: { id: "alice", label: "alice" }, profile: "h2c", limits: LIMITS });
  t.after(() => c.detach());
  return c;
}

test("regression: server requests withdrawn with $/cancel_request stayed in memory for the connection's life", (t) => {
  const c = connection(t);
  for (let i = 0; i < 1_000; i++) {
    c.send({ jsonrpc: "2.0", id: `perm-${i}`, method: Acp.client.session.requestPermission, params: { sessionId: "s-1" } }, "s-1");
    c.send({ jsonrpc: "2.0", method: Acp.protocol.cancelRequest, params: { requestId: `perm-${i}` } }, "s-1");
  }
  assert.equal(c.pendingServerRequests, 0);
});

test("an answered server request is forgotten; one still open is kept for its answer", (t) => {
  const c = connection(t);
  c.send({ jsonrpc: "2.0", id: 1, method: Acp.client.session.requestPermission, params: { sessionId: "s-1" } }, "s-1");
  c.send({ jsonrpc: "2.0", id: "1", method: Acp.client.session.requestPermission, params: { sessionId: "s-2" } }, "s-2");
  assert.equal(c.pendingServerRequests, 2);
  assert.equal(c.sessionOfRequest(1), "s-1");
  assert.equal(c.takeSessionRequest(1), "s-1");
  assert.equal(c.pendingServerRequests, 1);
  // Withdrawing id 1 (a number) must not forget "1" (a string).
  c.send({ jsonrpc: "2.0", method: Acp.protocol.cancelRequest, params: { requestId: 1 } }, "s-1");
  assert.equal(c.sessionOfRequest("1"), "s-2");
});
