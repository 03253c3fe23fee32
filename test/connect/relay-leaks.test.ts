// What `acp-remote connect` keeps while it retries an unreachable server: the
// relay runs in this process against a real server behind a TCP proxy that
// refuses every new connection, so that the timers left behind by each
// attempt can be seen (unref'd ones too, through async_hooks). The abort
// listeners of the waits between attempts are checked in backoff.test.ts.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { Relay } from "../../client/relay.ts";
import { ExitCode } from "../../client/exit-code.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { LiveTimers } from "../helpers/live-timers.ts";
import { startSdkServer } from "../helpers/sdk-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Waits until `predicate` holds, polling with a deadline. */
async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const ATTEMPTS = 15;
/** Distinct from every other timeout here, to recognise the relay's initialize timers. */
const INITIALIZE_TIMEOUT_MS = 77_777;

// With `auto` the network is opened by the first send, so every refused
// attempt gets as far as arming the initialize deadline.
const transport = "auto";
test(`regression: ${ATTEMPTS} refused reconnect attempts over --transport ${transport} left one armed initialize timer each`, async () => {
  const server = await startSdkServer("http1");
  const proxy = await startTcpProxy(server.port);
  cleanups.push(() => server.close(), () => proxy.close());

  const timers = new LiveTimers();
  const toEditor: JsonRpcMessage[] = [];
  const log: string[] = [];
  const relay = new Relay((m) => toEditor.push(m), {
    url: `http://127.0.0.1:${proxy.port}/acp`,
    transport: { transport },
    log: (line) => log.push(line),
    reconnectMinMs: 1,
    reconnectMaxMs: 2,
    reconnectGiveUpMs: 60_000,
    initializeTimeoutMs: INITIALIZE_TIMEOUT_MS,
  });
  relay.fromEditor({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  await until(() => toEditor.some((m) => "id" in m && m.id === 1), "the answer to initialize");

  timers.watch();
  proxy.block();
  proxy.cut();
  await until(() => log.some((l) => l.startsWith(`reconnect attempt ${ATTEMPTS} failed`)), `attempt ${ATTEMPTS} to fail`);
  await relay.end();
  assert.equal(await relay.done, ExitCode.Ok);
  assert.equal(await timers.armedAtEnd(INITIALIZE_TIMEOUT_MS, 2_000), 0, `initialize timers still armed after ${ATTEMPTS} attempts and the end`);
});
