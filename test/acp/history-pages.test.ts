// A session's history over /acp: compacted in every replay, and in pages of
// turns for a client that asks (docs/transport.md, "What a replay holds" and
// "Pages of a replay"). The real sidecar with the fixture agent, whose `work`
// command streams what a coding agent does (messages in small chunks, tool
// calls with their updates, the plan rewritten, permission requests); the
// SDK's own client (which checks every update against the schema) over
// WebSocket and over Streamable HTTP.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { client, methods, PROTOCOL_VERSION, type ClientConnection, type SessionNotification, type SessionUpdate } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { AcpExt } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { endsTurn } from "../../protocol/history.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { drawHistory, toolStates, type MessageBlock } from "../helpers/view-model.ts";

const TOKEN = "history-pages-token-0123456789";

interface SdkClient {
  connection: ClientConnection;
  updates: SessionNotification[];
  initialize: Record<string, unknown>;
}

type Transport = "websocket" | "http";

describe("a session's history over /acp: compacted, and in pages on request", () => {
  let served: ServedFixture;
  const clients: SdkClient[] = [];

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN] });
  });

  after(async () => {
    for (const c of clients) {
      c.connection.close();
      await c.connection.closed.catch(() => undefined);
    }
    await served?.close();
  });

  async function connect(transport: Transport): Promise<SdkClient> {
    const base = `127.0.0.1:${served.server.port}/acp`;
    const headers = { authorization: `Bearer ${TOKEN}` };
    const stream = transport === "http" ? createHttpStream(`http://${base}`, { headers }) : (createWebSocketStream(`ws://${base}`, { WebSocket, headers }) as ReturnType<typeof createHttpStream>);
    const updates: SessionNotification[] = [];
    const connection = client({ name: "history-pages" })
      .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
        updates.push(params);
      })
      // Every permission request is allowed, as a person would.
      .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }))
      .connect(stream);
    const initialize = (await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} })) as unknown as Record<string, unknown>;
    const made = { connection, updates, initialize };
    clients.push(made);
    return made;
  }

  /** A session of `turns` turns of work, each of `updates` updates; what the prompting client received of each turn. */
  async function session(turns: number, updates: number): Promise<{ sessionId: string; live: SessionUpdate[][] }> {
    const a = await connect("websocket");
    const { sessionId } = await a.connection.agent.request(methods.agent.session.new, { cwd: served.dataDir, mcpServers: [] });
    const live: SessionUpdate[][] = [];
    for (let turn = 1; turn <= turns; turn++) {
      const from = a.updates.length;
      const answer = await a.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `work ${updates} ${turn}` }] });
      assert.equal(answer.stopReason, "end_turn");
      live.push(a.updates.slice(from).map((n) => n.update));
    }
    // Besides the agent's, the server may tell the session's title (session_info_update).
    const agents = live.map((t) => t.filter((u) => u.sessionUpdate !== "session_info_update").length);
    assert.deepEqual(agents, Array.from({ length: turns }, () => updates), "the agent sent what it was asked to");
    return { sessionId, live };
  }

  async function load(c: SdkClient, sessionId: string, meta?: Record<string, unknown>): Promise<Record<string, unknown>> {
    return (await c.connection.agent.request(methods.agent.session.load, { sessionId, cwd: served.dataDir, mcpServers: [], ...(meta === undefined ? {} : { _meta: meta }) })) as unknown as Record<string, unknown>;
  }

  const messages = (updates: readonly SessionUpdate[]): string[] =>
    drawHistory(updates).blocks.filter((b): b is MessageBlock => b.block === "message" && b.who !== "user").map((b) => b.text);

  test("a replay sends each tool call once, in its final state, and the last plan of each turn (it sent every update of them); messages read the same", async () => {
    const { sessionId, live } = await session(2, 1_500);
    const b = await connect("websocket");
    await load(b, sessionId);
    const replayed = b.updates.map((n) => n.update);
    const liveAll = live.flat();

    const ids = (updates: readonly SessionUpdate[]): string[] => updates.flatMap((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update" ? [u.toolCallId] : []));
    const liveIds = new Set(ids(liveAll));
    assert.ok(liveIds.size > 10, `${liveIds.size} tool calls`);
    assert.deepEqual(ids(replayed).sort(), [...liveIds].sort(), "one update per tool call");
    assert.deepEqual(toolStates(drawHistory(replayed)), toolStates(drawHistory(liveAll)), "each in its final state");
    assert.equal(replayed.filter((u) => u.sessionUpdate === "plan").length, 2, "one plan per turn");
    assert.deepEqual(drawHistory(replayed).plansAtTurnEnds, live.map((turn) => drawHistory(turn).plan), "the plan each turn left");
    assert.deepEqual(messages(replayed), messages(liveAll));
    assert.ok(replayed.length * 10 < liveAll.length, `${replayed.length} updates replayed for ${liveAll.length} live`);
    assert.equal(replayed.filter(endsTurn).length, 2, "each turn's end");
  });

  test("initialize offers pages; session/load asks for the latest turn: it gets the state the others left, the end of the turn before, that turn, and how many come before; _acp-remote/session/history gives the earlier ones down to the first, which add up to the whole replay", async () => {
    const { sessionId } = await session(3, 300);
    const whole = await connect("websocket");
    const full = await load(whole, sessionId);
    assert.equal((full["_meta"] as Record<string, Record<string, unknown>>)[AcpExt.metaKey]?.[AcpExt.history], undefined, "no pages asked, none told");
    const all = whole.updates.map((n) => n.update);
    const turns = cut(all);
    assert.equal(turns.length, 3);

    const paged = await connect("websocket");
    assert.equal((paged.initialize["_meta"] as Record<string, Record<string, unknown>>)[AcpExt.metaKey]?.[AcpExt.historyPages], true);
    const answer = await load(paged, sessionId, { [AcpExt.metaKey]: { [AcpExt.history]: { turns: 1 } } });
    assert.deepEqual((answer["_meta"] as Record<string, Record<string, unknown>>)[AcpExt.metaKey]?.[AcpExt.history], { earlier: 2 });
    const first = paged.updates.map((n) => n.update);
    // The page: the end of the turn before (it ends that turn in a view), then the latest turn as the whole replay has it.
    const own = [turns[1]!.at(-1)!, ...turns[2]!];
    const carried = first.slice(0, first.length - own.length);
    assert.deepEqual(first.slice(carried.length), own);
    // Before them, the plan the earlier turns left, and the title when the server told one.
    assert.deepEqual(carried.filter((u) => u.sessionUpdate !== "session_info_update"), [turns[1]!.filter((u) => u.sessionUpdate === "plan").at(-1)]);

    // Each page leaves the end of its last turn to the page after it.
    const page1 = await history(paged, sessionId, 2, 1);
    assert.deepEqual(page1, { updates: [turns[0]!.at(-1), ...turns[1]!.slice(0, -1)], earlier: 1 });
    const page0 = await history(paged, sessionId, 1, 5);
    assert.deepEqual(page0, { updates: turns[0]!.slice(0, -1), earlier: 0 });
    assert.deepEqual([...page0.updates, ...page1.updates, ...own], all);
    assert.deepEqual(await history(paged, sessionId, 0, 1), { updates: [], earlier: 0 }, "nothing before the first");
  });

  test("over Streamable HTTP: session/attach asks for the latest two turns; the earlier one comes on the session's stream", async () => {
    const { sessionId } = await session(3, 200);
    const whole = await connect("http");
    await load(whole, sessionId);
    const turns = cut(whole.updates.map((n) => n.update));
    const c = await connect("http");
    const answer = (await c.connection.agent.request(AcpExt.sessionAttach, { sessionId, historyPolicy: "full", _meta: { [AcpExt.metaKey]: { [AcpExt.history]: { turns: 2 } } } })) as Record<string, unknown>;
    assert.deepEqual((answer["_meta"] as Record<string, Record<string, unknown>>)[AcpExt.metaKey]?.[AcpExt.history], { earlier: 1 });
    const replayed = c.updates.map((n) => n.update);
    const own = [turns[0]!.at(-1)!, ...turns[1]!, ...turns[2]!];
    assert.deepEqual(replayed.slice(replayed.length - own.length), own);
    assert.deepEqual(await history(c, sessionId, 1, 1), { updates: turns[0]!.slice(0, -1), earlier: 0 });
  });

  test("pages are asked for with whole numbers of turns, of a session the client follows", async () => {
    const { sessionId } = await session(1, 20);
    const c = await connect("websocket");
    for (const bad of [{ turns: 0 }, { turns: 1.5 }, { turns: "2" }, "all"]) {
      await assert.rejects(load(c, sessionId, { [AcpExt.metaKey]: { [AcpExt.history]: bad } }), (e: { code?: number }) => e.code === ErrorCode.InvalidParams, JSON.stringify(bad));
    }
    await assert.rejects(history(c, sessionId, 0, 1), (e: { code?: number }) => e.code === ErrorCode.ResourceNotFound, "not followed yet");
    await load(c, sessionId, { [AcpExt.metaKey]: { [AcpExt.history]: { turns: 1 } } });
    await assert.rejects(history(c, sessionId, -1, 1), (e: { code?: number }) => e.code === ErrorCode.InvalidParams);
    await assert.rejects(history(c, sessionId, 1, 0), (e: { code?: number }) => e.code === ErrorCode.InvalidParams);
  });
});

async function history(c: SdkClient, sessionId: string, before: number, turns: number): Promise<{ updates: SessionUpdate[]; earlier: number }> {
  return c.connection.agent.request(AcpExt.sessionHistory, { sessionId, before, turns });
}

/** The updates cut into turns, each ending with its end mark. */
function cut(updates: readonly SessionUpdate[]): SessionUpdate[][] {
  const turns: SessionUpdate[][] = [[]];
  for (const u of updates) {
    turns.at(-1)!.push(u);
    if (endsTurn(u)) turns.push([]);
  }
  if (turns.at(-1)!.length === 0) turns.pop();
  return turns;
}
