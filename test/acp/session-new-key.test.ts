// session/new with a request key (`_meta.acpRemote.requestKey`, docs/transport.md):
// a client whose answer to session/new was lost with the link asks again with
// the same key and gets the session the first try made, not a second one. The
// real sidecar with its fixture agent, over WebSocket and Streamable HTTP; a
// key is the person's own, and one whose session ended makes a new session.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Acp, AcpExt, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { DEFAULT_SESSION_NEW_KEY_MAX_CHARS } from "../../sidecar/limits.ts";
import type { AgentHub } from "../../sidecar/hub/hub.ts";
import { HubSession } from "../../sidecar/hub/session.ts";
import { type CreatedSession, SessionNewKeys, withoutRequestKey } from "../../sidecar/hub/session-new-keys.ts";
import type { Principal } from "../../sidecar/hub/types.ts";
import { createClient, isSse, type OpenedSse, type ProtocolClient } from "../helpers/http-clients.ts";
import { open, untilStatus } from "../helpers/hub-test-client.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { OTHER_TOKEN, TOKEN } from "../helpers/transport-server.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };
const WAIT_MS = 20_000;

/** session/new's params under a request key; `cwd` absent for a person of a labelled token (their own folder). */
function keyed(key: unknown, cwd?: string): Record<string, unknown> {
  return { ...(cwd === undefined ? {} : { cwd }), mcpServers: [], _meta: { [AcpExt.metaKey]: { [AcpExt.requestKey]: key } } };
}

type Answer = { id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

describe("session/new with a request key", () => {
  let served: ServedFixture;
  let hub: AgentHub;
  const sockets: WsTestClient[] = [];
  const clients: ProtocolClient[] = [];
  const streams: OpenedSse[] = [];

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN, { token: OTHER_TOKEN, label: "other" }] });
    hub = served.server.hub;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    for (const ws of sockets) ws.ws.terminate();
    for (const client of clients) await client.close();
    await served.close();
  });

  const sessionsOf = (label: string) => hub.status().sessions.filter((s) => s.owner === label);

  /**
   * The owner's sessions made from now on: those there now (`current`), and
   * every one made meanwhile (`made`), ended since or not, so that a first
   * try's session that ended is counted too.
   */
  function watchNewSessions(): { current: () => ReturnType<typeof sessionsOf>; made: Set<string>; stop: () => void } {
    const known = new Set(sessionsOf("owner").map((s) => s.sessionId));
    const current = () => sessionsOf("owner").filter((s) => !known.has(s.sessionId));
    const made = new Set<string>();
    const stop = hub.onChange(() => {
      for (const s of current()) made.add(s.sessionId);
    });
    return { current, made, stop };
  }

  async function webSocket(token = TOKEN): Promise<{ ws: WsTestClient; initialize: Answer }> {
    const opened = await WsTestClient.open(`${served.server.url}/acp`, { headers: { authorization: `Bearer ${token}` } });
    assert.ok(!isRefusal(opened), "the handshake is accepted");
    sockets.push(opened);
    opened.send(INITIALIZE);
    const initialize = (await opened.next(WAIT_MS)) as Answer;
    assert.equal(initialize.error, undefined);
    return { ws: opened, initialize };
  }

  /** Sends a request and reads up to its answer; what came before it is returned too. */
  async function call(ws: WsTestClient, id: number, method: string, params: unknown): Promise<{ answer: Answer; before: Record<string, unknown>[] }> {
    ws.send({ jsonrpc: "2.0", id, method, params });
    const before: Record<string, unknown>[] = [];
    for (;;) {
      const message = await ws.next(WAIT_MS);
      if (message["id"] === id && !("method" in message)) return { answer: message as Answer, before };
      before.push(message);
    }
  }

  for (const moment of ["right after sending it", "once the server answered it"] as const) {
    it(`regression: a session/new retried with the same key after its answer was lost made a second session; now it makes none (WebSocket dropped ${moment})`, async () => {
      const key = `ws-${moment}`;
      const owned = sessionsOf("owner").length;
      const sessions = watchNewSessions();
      try {
        const first = await webSocket();
        first.ws.send({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: keyed(key, "/tmp") });
        // The server answered: the session follows the first connection, which never reads that answer.
        if (moment === "once the server answered it") await untilStatus(hub, () => sessions.current().some((s) => s.state === "live"));
        await first.ws.close();

        const second = await webSocket();
        const { answer } = await call(second.ws, 1, Acp.agent.session.new, keyed(key, "/tmp"));
        assert.equal(answer.error, undefined, JSON.stringify(answer.error));
        const sessionId = String(answer.result?.["sessionId"]);
        assert.ok(answer.result?.["modes"], "the same result as the first try's: the agent's modes");
        assert.deepEqual([...sessions.made], [sessionId], "one session was made, not two");
        assert.equal(sessionsOf("owner").length, owned + 1);
        const listed = await call(second.ws, 2, Acp.agent.session.list, {});
        const ids = (listed.answer.result?.["sessions"] as Array<{ sessionId: string }>).map((s) => s.sessionId);
        assert.equal(ids.filter((id) => id === sessionId).length, 1);
        assert.equal(ids.length, owned + 1, "session/list shows no second session");
      // It follows the session now: the session is live on this connection, and a prompt runs.
        const info = hub.status().sessions.find((s) => s.sessionId === sessionId);
        assert.equal(info?.connectionId, second.ws.headers["acp-connection-id"]);
        const prompted = await call(second.ws, 3, Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo still here" }] });
        assert.equal(prompted.answer.result?.["stopReason"], "end_turn");
      } finally {
        sessions.stop();
      }
    });
  }

  it("regression: a session/new whose answer waited on a connection stream nobody opened, retried on a new connection with the same key, made a second session; now it makes none (Streamable HTTP)", async (t) => {
    const client = createClient("h2c", served.server.url);
    clients.push(client);
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const post = (connectionId: string | undefined, message: unknown) =>
      client.request("POST", "/acp", { headers: { ...auth, ...(connectionId === undefined ? {} : { "acp-connection-id": connectionId }) }, body: JSON.stringify(message) });
    const owned = sessionsOf("owner").length;
    const sessions = watchNewSessions();
    t.after(sessions.stop);

    // The first connection never opens its connection stream: the answer is made, and nobody gets it.
    const lost = await post(undefined, INITIALIZE);
    assert.equal(lost.status, 200);
    const lostId = String(lost.headers["acp-connection-id"]);
    assert.equal((await post(lostId, { jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: keyed("http", "/tmp") })).status, 202);
    await untilStatus(hub, () => sessions.current().some((s) => s.state === "live" && s.connectionId === lostId));

    const init = await post(undefined, INITIALIZE);
    const connectionId = String(init.headers["acp-connection-id"]);
    const stream = await client.openSse("/acp", { authorization: auth.authorization, accept: "text/event-stream", "acp-connection-id": connectionId });
    assert.ok(isSse(stream));
    streams.push(stream);
    assert.equal((await post(connectionId, { jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: keyed("http", "/tmp") })).status, 202);
    const answer = (await stream.reader.until((m) => m["id"] === 1, WAIT_MS)).pop() as Answer;
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    const sessionId = String(answer.result?.["sessionId"]);
    assert.deepEqual([...sessions.made], [sessionId], "one session was made, not two");
    assert.equal(sessionsOf("owner").length, owned + 1);
    assert.equal(hub.status().sessions.find((s) => s.sessionId === sessionId)?.connectionId, connectionId, "it follows the new connection");
    assert.equal((await post(connectionId, { jsonrpc: "2.0", id: 2, method: Acp.agent.session.list, params: {} })).status, 202);
    const listed = (await stream.reader.until((m) => m["id"] === 2, WAIT_MS)).pop() as Answer;
    assert.equal((listed.result?.["sessions"] as unknown[]).length, owned + 1);
  });

  it("a retry that comes while the first try still creates the session waits for it, and both get the same session", async () => {
    const person: Principal = { id: "person:racer", label: "racer" };
    const a = await open(hub, person);
    const b = await open(hub, person);
    // Both in the same turn of the event loop: the second finds the first still creating.
    a.connection.receive({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: keyed("race") });
    b.connection.receive({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: keyed("race") });
    const answers = await Promise.all([a, b].map((c) => c.waitFor((d) => "id" in d.message && d.message.id === 1 && !("method" in d.message))));
    const ids = answers.map((d) => (d.message as { result?: { sessionId: string } }).result?.sessionId);
    assert.equal(typeof ids[0], "string");
    assert.equal(ids[1], ids[0]);
    assert.equal(sessionsOf("racer").length, 1);
    a.connection.detach();
    b.connection.detach();
  });

  it("another person's key is another key: the same key makes that person a session of their own, and leaks nobody's", async () => {
    const owner = await webSocket();
    const mine = await call(owner.ws, 1, Acp.agent.session.new, keyed("shared", "/tmp"));
    const other = await webSocket(OTHER_TOKEN);
    const theirs = await call(other.ws, 1, Acp.agent.session.new, keyed("shared"));
    assert.equal(theirs.answer.error, undefined, JSON.stringify(theirs.answer.error));
    assert.notEqual(theirs.answer.result?.["sessionId"], mine.answer.result?.["sessionId"]);
    assert.equal(theirs.before.length, 0, "nothing of the owner's session reached the other person");
    const listed = await call(other.ws, 2, Acp.agent.session.list, {});
    assert.deepEqual((listed.answer.result?.["sessions"] as Array<{ sessionId: string }>).map((s) => s.sessionId), [theirs.answer.result?.["sessionId"]]);
    // The owner's session still follows the owner.
    assert.equal(hub.status().sessions.find((s) => s.sessionId === mine.answer.result?.["sessionId"])?.connectionId, owner.ws.headers["acp-connection-id"]);
  });

  it("a key whose session was closed since makes a new session", async () => {
    const { ws } = await webSocket();
    const first = await call(ws, 1, Acp.agent.session.new, keyed("closed", "/tmp"));
    const sessionId = String(first.answer.result?.["sessionId"]);
    assert.equal((await call(ws, 2, Acp.agent.session.close, { sessionId })).answer.error, undefined);
    const again = await call(ws, 3, Acp.agent.session.new, keyed("closed", "/tmp"));
    assert.equal(again.answer.error, undefined);
    assert.notEqual(again.answer.result?.["sessionId"], sessionId);
    // And the new one is what the key answers from now on.
    const third = await call(ws, 4, Acp.agent.session.new, keyed("closed", "/tmp"));
    assert.equal(third.answer.result?.["sessionId"], again.answer.result?.["sessionId"]);
  });

  it(`a request key that is no string of 1 to ${DEFAULT_SESSION_NEW_KEY_MAX_CHARS} characters is refused with -32602, and makes no session`, async () => {
    const { ws } = await webSocket();
    const owned = sessionsOf("owner").length;
    let id = 0;
    for (const key of ["k".repeat(DEFAULT_SESSION_NEW_KEY_MAX_CHARS + 1), "", 7, null, { key: "k" }]) {
      const { answer } = await call(ws, ++id, Acp.agent.session.new, keyed(key, "/tmp"));
      assert.equal(answer.error?.code, ErrorCode.InvalidParams, `${JSON.stringify(key)}: ${JSON.stringify(answer)}`);
      assert.match(answer.error.message, /requestKey must be a string of 1 to 128 characters/);
    }
    const longest = await call(ws, ++id, Acp.agent.session.new, keyed("k".repeat(DEFAULT_SESSION_NEW_KEY_MAX_CHARS), "/tmp"));
    assert.equal(longest.answer.error, undefined);
    assert.equal(sessionsOf("owner").length, owned + 1);
  });

  it("the initialize result offers it, over WebSocket and over Streamable HTTP (beside resumableStreams)", async () => {
    const { initialize } = await webSocket();
    const meta = (result: Record<string, unknown> | undefined) => (result?.["_meta"] as Record<string, Record<string, unknown>> | undefined)?.[AcpExt.metaKey];
    assert.equal(meta(initialize.result)?.[AcpExt.sessionNewRequestKey], true);
    const client = createClient("http1", served.server.url);
    clients.push(client);
    const init = await client.request("POST", "/acp", { headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(INITIALIZE) });
    const result = (JSON.parse(init.body) as Answer).result;
    assert.equal(meta(result)?.[AcpExt.sessionNewRequestKey], true);
    assert.equal(meta(result)?.[AcpExt.resumableStreams], true);
  });
});

describe("the request keys a node remembers", () => {
  const session = (id: string): CreatedSession => ({
    session: new HubSession({ id, agent: "a", cwd: "/", roots: ["/"], mcpServers: [], ownerId: "p", ownerLabel: "p", createdAt: 0, updatedAt: 0 }),
    result: { sessionId: id },
  });
  const alive = () => true;

  it("a key is forgotten its time to live after its session was made: a try after that makes a new session", async () => {
    let now = 0;
    const keys = new SessionNewKeys({ ttlMs: 1_000, now: () => now });
    const first = await keys.once("p", "a", "k", alive, async () => session("s1"));
    now = 999;
    assert.equal((await keys.once("p", "a", "k", alive, async () => session("s2"))).session.id, first.session.id);
    now = 1_000;
    const later = await keys.once("p", "a", "k", alive, async () => session("s3"));
    assert.equal(later.session.id, "s3");
    assert.equal(later.again, false);
  });

  it("past its bound per person the oldest key is forgotten first; other persons keep theirs", async () => {
    const keys = new SessionNewKeys({ perPerson: 2 });
    for (const k of ["k1", "k2", "k3"]) await keys.once("p", "a", k, alive, async () => session(k));
    await keys.once("q", "a", "k1", alive, async () => session("q1"));
    assert.equal(keys.size, 3);
    assert.equal((await keys.once("p", "a", "k1", alive, async () => session("new"))).session.id, "new", "k1 was forgotten");
    assert.equal((await keys.once("p", "a", "k3", alive, async () => session("never"))).session.id, "k3");
    assert.equal((await keys.once("q", "a", "k1", alive, async () => session("never"))).session.id, "q1");
  });

  it("a failed try leaves no key: the next try creates", async () => {
    const keys = new SessionNewKeys();
    await assert.rejects(keys.once("p", "a", "k", alive, async () => Promise.reject(new Error("agent down"))), /agent down/);
    assert.equal(keys.size, 0);
    assert.equal((await keys.once("p", "a", "k", alive, async () => session("s"))).again, false);
  });

  it("the key is the server's: the agent gets session/new's params without it, and with the rest of _meta", () => {
    assert.deepEqual(withoutRequestKey({ cwd: "/", _meta: { [AcpExt.metaKey]: { [AcpExt.requestKey]: "k" } } }), { cwd: "/" });
    assert.deepEqual(
      withoutRequestKey({ cwd: "/", _meta: { trace: 1, [AcpExt.metaKey]: { [AcpExt.requestKey]: "k", other: true } } }),
      { cwd: "/", _meta: { trace: 1, [AcpExt.metaKey]: { other: true } } },
    );
  });
});
