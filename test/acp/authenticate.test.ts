// `authenticate` from a remote client reaches the agent: `acp-remote serve`
// (a child process) passes it through to the agent process, which every
// session of that agent shares, and the agent's refusal of a method it does
// not offer comes back as its own error. The SDK's client over Streamable
// HTTP and over WebSocket; the fixture agent offers one method.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import WebSocket from "ws";
import { client, methods, PROTOCOL_VERSION, type ClientContext, type SessionNotification, type Stream } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { spawnServe, type ServeChild } from "../helpers/serve-child.ts";

const TOKEN = "authenticate-token-0123456789";
let server: ServeChild | undefined;
after(async () => server?.close());

async function asClient<T>(stream: Stream, op: (ctx: ClientContext, updates: SessionNotification[]) => Promise<T>): Promise<T> {
  const updates: SessionNotification[] = [];
  return client({ name: "authenticate-test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .connectWith(stream, (ctx) => op(ctx, updates));
}

const text = (updates: SessionNotification[]): string =>
  updates.map((u) => (u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text" ? u.update.content.text : "")).join("");

test("authenticate passes through the server to the shared agent: its methods in initialize, its error for an unknown one, and later sessions of another connection signed in", async () => {
  server = await spawnServe({ token: TOKEN });
  const headers = { authorization: `Bearer ${TOKEN}` };
  await asClient(createHttpStream(`${server.url}/acp`, { headers }), async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    assert.deepEqual(init.authMethods?.map((m) => m.id), ["fixture-login"]);
    await assert.rejects(ctx.request(methods.agent.authenticate, { methodId: "nope" }), (error: { code?: number }) => error.code === -32602);
    assert.deepEqual(await ctx.request(methods.agent.authenticate, { methodId: "fixture-login" }), {});
  });
  // Another connection, over WebSocket: the agent process is signed in already.
  const ws = createWebSocketStream(`${server.url.replace(/^http/, "ws")}/acp`, { WebSocket, headers }) as Stream;
  const said = await asClient(ws, async (ctx, updates) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "auth" }] });
    return text(updates);
  });
  assert.equal(said, "auth: fixture-login");
});
