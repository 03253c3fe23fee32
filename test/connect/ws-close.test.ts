// Closing a WebSocket transport on purpose: the close handshake, and nothing
// left armed once it is done.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { WebSocketTransport } from "../../client/ws-transport.ts";
import { DEFAULT_CLIENT_CLOSE_TIMEOUT_MS } from "../../client/limits.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { LiveTimers } from "../helpers/live-timers.ts";
import { startSdkServer } from "../helpers/sdk-server.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

test("regression: a WebSocket closed on purpose kept its cut-off timer armed after the peer answered the close frame", async () => {
  const server = await startSdkServer("http1");
  cleanups.push(() => server.close());
  const t = new WebSocketTransport(server.url);
  let answered: () => void = () => {};
  const initialized = new Promise<void>((resolve) => {
    answered = resolve;
  });
  t.onmessage = (m: JsonRpcMessage) => {
    if ("id" in m && m.id === 0) answered();
  };
  await t.start();
  await t.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await initialized;

  const timers = new LiveTimers();
  timers.watch();
  await t.close();
  assert.equal(await timers.armedAtEnd(DEFAULT_CLIENT_CLOSE_TIMEOUT_MS, 1_000), 0);
});
