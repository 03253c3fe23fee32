// A session's title: the agent's own (`session_info_update`), or else the
// start of its first prompt, shortened; told to every follower as a
// `session_info_update` (the sender too), journaled for a replay, and listed
// by session/list. The real sidecar with its fixture agent, and the official
// ACP client over WebSocket.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { client, methods, PROTOCOL_VERSION, type ClientConnection, type ContentBlock, type SessionNotification } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { DEFAULT_SESSION_TITLE_CHARS } from "../../sidecar/limits.ts";
import { promptTitle } from "../../sidecar/hub/session-titles.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";

const TOKEN = "session-titles-token-0123456789";

interface Peer {
  connection: ClientConnection;
  updates: SessionNotification[];
}

/** The titles the peer was told for `sessionId`, in order (a marked update, which names nothing, left out). */
function titles(peer: Peer, sessionId: string): Array<string | null> {
  return peer.updates.flatMap((n) => (n.sessionId === sessionId && n.update.sessionUpdate === "session_info_update" && n.update.title !== undefined ? [n.update.title] : []));
}

describe("session titles", () => {
  let served: ServedFixture;
  const peers: Peer[] = [];

  async function peer(): Promise<Peer> {
    const updates: SessionNotification[] = [];
    const app = client({ name: "session-titles-test" }).onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      updates.push(params);
    });
    const stream = createWebSocketStream(`${served.server.url.replace(/^http/, "ws")}/acp`, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } });
    const connection = app.connect(stream);
    const made = { connection, updates };
    peers.push(made);
    await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    return made;
  }

  const say = (p: Peer, sessionId: string, text: string) => p.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  const listed = async (p: Peer, sessionId: string): Promise<string | null | undefined> =>
    (await p.connection.agent.request(methods.agent.session.list, {})).sessions.find((s) => s.sessionId === sessionId)?.title;

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN] });
  });
  after(async () => {
    for (const p of peers) {
      p.connection.close();
      await p.connection.closed.catch(() => undefined);
    }
    await served?.close();
  });

  test("an untitled session is named after its first prompt, shortened; later prompts keep it; a replay tells it too", async () => {
    const a = await peer();
    const { sessionId } = await a.connection.agent.request(methods.agent.session.new, { cwd: served.dataDir, mcpServers: [] });
    assert.equal(await listed(a, sessionId), undefined, "no title before a prompt");

    await say(a, sessionId, "echo Fix the flaky login test in auth.ts: it fails one run in ten on CI and nobody knows why\necho and more");
    const expected = "echo Fix the flaky login test in auth.ts: it fails one run…";
    assert.ok([...expected].length <= DEFAULT_SESSION_TITLE_CHARS);
    assert.equal(await listed(a, sessionId), expected);
    assert.deepEqual(titles(a, sessionId), [expected], "the sender is told the title made of its prompt");

    await say(a, sessionId, "echo a second prompt");
    assert.equal(await listed(a, sessionId), expected, "only the first prompt names the session");

    const b = await peer();
    await b.connection.agent.request(methods.agent.session.load, { sessionId, cwd: served.dataDir, mcpServers: [] });
    assert.deepEqual(titles(b, sessionId), [expected], "the replay names the session as the live turn did");
  });

  test("the agent's title wins over the prompt's; when the agent clears its own, the prompt's is back", async () => {
    const a = await peer();
    const { sessionId } = await a.connection.agent.request(methods.agent.session.new, { cwd: served.dataDir, mcpServers: [] });
    await say(a, sessionId, "echo hello");
    assert.equal(await listed(a, sessionId), "echo hello");
    await say(a, sessionId, "title Greeting the agent");
    assert.equal(await listed(a, sessionId), "Greeting the agent");
    await say(a, sessionId, "title");
    assert.equal(await listed(a, sessionId), "echo hello");
    assert.deepEqual(titles(a, sessionId), ["echo hello", "Greeting the agent", null]);
  });

  test("the title is the first line with text, white space and control characters read as one space", () => {
    const text = (t: string): ContentBlock => ({ type: "text", text: t });
    assert.equal(promptTitle([text("\n\n   Refactor\tthe \u0007 parser  \nsecond line")]), "Refactor the parser");
    assert.equal(promptTitle([{ type: "image", data: "", mimeType: "image/png" }]), undefined);
    assert.equal(promptTitle([{ type: "image", data: "", mimeType: "image/png" }, { type: "resource_link", name: "notes.md", uri: "file:///notes.md" }]), "notes.md");
    // One word longer than the limit is cut inside it.
    assert.equal(promptTitle([text("x".repeat(100))], 10), `${"x".repeat(9)}…`);
    // Characters outside the BMP count as one and are never split.
    assert.equal(promptTitle([text("😀".repeat(20))], 10), `${"😀".repeat(9)}…`);
  });
});
