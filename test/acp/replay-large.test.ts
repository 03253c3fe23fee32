// Regression: a session/load whose replay is larger than a burst the stream
// can write at once. The whole journal goes into the session stream in one go;
// the reader is healthy, so it must receive all of it, not be cut off as a
// stalled reader.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { client, methods, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createClient, isSse } from "../helpers/http-clients.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

const TOKEN = "replay-large-token-0123456789";
/** Tool calls in the turn; each is one entry of the history (its two updates fold into one). */
const TOOL_CALLS = 4_000;

test("session/load replays a history of 4,000 entries whole to a reader that keeps up", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-replay-"));
  const server = await serveFixtureAgent({ tokens: [TOKEN], dataDir: dir });
  try {
    const connectOnce = (updates: SessionNotification[], baseUrl: string) =>
      client({ name: "replay-test" })
        .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
          updates.push(params);
        })
        .connect(createHttpStream(`${baseUrl}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } }));

    // The first client reaches the server through a proxy, so its network can be cut (a drop, not a DELETE).
    const proxy = await startTcpProxy(server.port);
    const first: SessionNotification[] = [];
    const a = connectOnce(first, `http://127.0.0.1:${proxy.port}`);
    await a.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await a.agent.request(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const script = Array.from({ length: TOOL_CALLS }, (_, i) => `tool edit step ${i}`).join("\n");
    const response = await a.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: script }] });
    assert.equal(response.stopReason, "end_turn");
    // The agent's updates (the server may also tell the session's title).
    assert.equal(first.filter((n) => n.update.sessionUpdate !== "session_info_update").length, TOOL_CALLS * 2);
    proxy.block();
    proxy.cut();
    a.close();
    await a.closed.catch(() => undefined);
    await proxy.close();

    // The resume flow of the spec, on raw HTTP/2: initialize, the session stream first, then session/load.
    const h2 = createClient("h2c", server.url);
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const init = await h2.request("POST", "/acp", {
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION } }),
      });
      assert.equal(init.status, 200);
      const connectionId = String(init.headers["acp-connection-id"]);
      const stream = await h2.openSse("/acp", { ...auth, accept: "text/event-stream", "acp-connection-id": connectionId, "acp-session-id": sessionId });
      assert.ok(isSse(stream), "the session stream opens before session/load");
      const load = await h2.request("POST", "/acp", {
        headers: { ...auth, "content-type": "application/json", "acp-connection-id": connectionId, "acp-session-id": sessionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: dir, mcpServers: [] } }),
      });
      assert.equal(load.status, 202);
      // The history: the user's prompt, then every tool call in its final state.
      const expected = 1 + TOOL_CALLS;
      let replayed = 0;
      while (replayed < expected) {
        const message = (await stream.reader.next(30_000)) as { method?: string };
        assert.equal(message.method, "session/update");
        replayed++;
      }
      assert.equal(stream.reader.isEnded, false, "the reader was not cut off");
      stream.close();
    } finally {
      await h2.close();
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
