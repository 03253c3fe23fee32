// Closing a WebSocket transport on purpose: the close handshake, and nothing
// left armed once it is done.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { WebSocketTransport } from "../../client/ws-transport.ts";
import { DEFAULT_CLIENT_CLOSE_TIMEOUT_MS } from "../../client/limits.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
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

  // Timers alive (created, neither fired nor cleared), unref'd ones included.
  const live = new Map<number, { _idleTimeout?: number }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type === "Timeout") live.set(id, resource as { _idleTimeout?: number });
    },
    destroy(id) {
      live.delete(id);
    },
  });
  hook.enable();
  await t.close();
  const armed = (): number => [...live.values()].filter((timer) => timer._idleTimeout === DEFAULT_CLIENT_CLOSE_TIMEOUT_MS).length;
  // The destroy hook of a cleared timer runs on a later turn: poll, with a deadline.
  const deadline = Date.now() + 1_000;
  while (armed() > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  hook.disable();
  assert.equal(armed(), 0);
});
