// What the device tests share: a real `serve` on port 0 with the fixture
// agent and a given access token, and a WebSocket ACP client that sends its
// token as the subprotocol, as the web client does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";
import { isRefusal, WsTestClient } from "./ws-client.ts";

const AGENT = join(import.meta.dirname, "..", "fixtures", "agent.ts");

export function serveFixture(dataDir: string, token: string): Promise<RunningServer> {
  return serve({
    host: "127.0.0.1",
    port: 0,
    agents: [{ name: "fixture", command: process.execPath, args: [AGENT] }],
    tokens: [token],
    auth: true,
    dataDir,
    allowedOrigins: [],
    log: () => undefined,
  });
}

/** A WebSocket on /acp with `token` as the subprotocol `acp.bearer.<token>`; fails the test when refused. */
export async function openWs(url: string, token: string): Promise<WsTestClient> {
  const client = await WsTestClient.open(`${url}/acp`, { protocols: [`acp.bearer.${token}`] });
  assert.ok(!isRefusal(client), `refused: ${isRefusal(client) ? client.status : ""}`);
  return client;
}

/** Sends a request and returns its response, skipping notifications. */
export async function call(client: WsTestClient, id: number, method: string, params: unknown): Promise<Record<string, unknown>> {
  client.send({ jsonrpc: "2.0", id, method, params });
  for (;;) {
    const message = await client.next();
    if (message["id"] === id && !("method" in message)) return message;
  }
}
