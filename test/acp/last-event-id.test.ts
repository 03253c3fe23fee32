// SSE resumption with Last-Event-ID (the RFD's v2 item, offered as
// `_meta.acpRemote.resumableStreams` in the initialize result), against the
// real sidecar and its agent process, over h2c and HTTP/1.1:
//
// | Reopened stream's Last-Event-ID                        | Answer                                         |
// |--------------------------------------------------------|------------------------------------------------|
// | the last event the reader got, cut mid-turn            | 200: exactly the events after it, then the rest |
// | the connection stream's last event                     | 200: what followed it (a response), once        |
// | an id of another session's stream                     | 410, nothing of either session                  |
// | an id of the same session on an earlier connection    | 410 (the client loads the session instead)      |
// | an id the stream no longer keeps, or never wrote       | 410                                             |
// | not an id at all                                       | 410                                             |
// | none                                                   | 200: what queued while no reader was there      |
// | an id, while the server still holds the old reader     | 200: the old reader ends (without an id: 409)   |
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { openStream, post } from "../helpers/acp-connection-requests.ts";
import { isSse, jsonOf } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import { sharedSidecar } from "../helpers/shared-sidecar.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
/** Updates before the pause of the turn, and after it. */
const FIRST = 60;
const SECOND = 40;
/** Where the reader stops reading and drops its stream: mid-burst, so the rest of the burst was written into the dead stream. */
const CUT_AFTER = 20;
/** A turn: FIRST numbered chunks at once, a pause long enough for the reader to be gone, SECOND more. */
const TURN = [
  ...Array.from({ length: FIRST }, (_, i) => `echo u${i + 1}`),
  "slow 400",
  ...Array.from({ length: SECOND }, (_, i) => `echo u${FIRST + i + 1}`),
].join("\n");

interface Opened {
  connectionId: string;
  initialize: Record<string, unknown>;
  connectionStream: OpenedSse;
}

async function connect(client: ProtocolClient): Promise<Opened> {
  const init = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE });
  assert.equal(init.status, 200, init.body);
  const connectionId = String(init.headers["acp-connection-id"]);
  const connectionStream = await openStream(client, connectionId, undefined);
  assert.ok(isSse(connectionStream));
  return { connectionId, initialize: jsonOf(init), connectionStream };
}

async function newSession(client: ProtocolClient, opened: Opened, id: number): Promise<string> {
  assert.equal((await post(client, opened.connectionId, undefined, { jsonrpc: "2.0", id, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } })).status, 202);
  const created = (await opened.connectionStream.reader.next()) as { id: number; result: { sessionId: string } };
  assert.equal(created.id, id);
  return created.result.sessionId;
}

/** A connection (its stream among the test's `streams`) with one session (request id 1), and the session's stream, open. */
async function connectWithSessionStream(client: ProtocolClient, streams: OpenedSse[]): Promise<{ opened: Opened; sessionId: string; stream: OpenedSse }> {
  const opened = await connect(client);
  streams.push(opened.connectionStream);
  const sessionId = await newSession(client, opened, 1);
  const stream = await openStream(client, opened.connectionId, sessionId);
  assert.ok(isSse(stream));
  return { opened, sessionId, stream };
}

function prompt(client: ProtocolClient, connectionId: string, sessionId: string, id: number, text: string): Promise<RawResponse> {
  return post(client, connectionId, sessionId, { jsonrpc: "2.0", id, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text }] } });
}

/** The text of an agent_message_chunk, or undefined for any other message. */
function chunkText(message: unknown): string | undefined {
  const m = message as { method?: string; params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } };
  return m.method === Acp.client.session.update && m.params?.update?.sessionUpdate === "agent_message_chunk" ? m.params.update.content?.text : undefined;
}

/** Asks session/list on the connection until it says the session's turn no longer runs. */
async function turnEnded(client: ProtocolClient, opened: Opened, sessionId: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let id = 1_000; Date.now() < deadline; id++) {
    assert.equal((await post(client, opened.connectionId, undefined, { jsonrpc: "2.0", id, method: Acp.agent.session.list, params: {} })).status, 202);
    const [listed] = (await opened.connectionStream.reader.until((m) => m["id"] === id, 15_000)).slice(-1) as [{ result: { sessions: { sessionId: string; _meta?: { acpRemote?: { running?: boolean } } }[] } }];
    const session = listed.result.sessions.find((s) => s.sessionId === sessionId);
    if (session?._meta?.acpRemote?.running === false) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail("the turn did not end on the server in time");
}

/** Reads chunk texts until the response with this id; returns them and the response. */
async function readTurn(stream: OpenedSse, id: number): Promise<{ texts: string[]; response: Record<string, unknown> }> {
  const messages = await stream.reader.until((m) => m["id"] === id && ("result" in m || "error" in m), 15_000);
  const response = messages.pop() as Record<string, unknown>;
  return { texts: messages.map(chunkText).filter((t): t is string => t !== undefined), response };
}

/**
 * The id of the last event a stream got: the stream's tag (hex, so it holds
 * no dash), a dash, and the event's number.
 */
function lastIdOf(stream: OpenedSse): string {
  const id = stream.reader.lastEventId;
  assert.match(id ?? "", /^[0-9a-f]{12}-[1-9][0-9]*$/, `event id ${id}`);
  return id as string;
}

const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `u${from + i}`);

function assertGone(answer: OpenedSse | RawResponse, why: RegExp): void {
  assert.ok(!isSse(answer), `the stream opened (${isSse(answer) ? answer.status : ""}) instead of 410`);
  assert.equal(answer.status, 410, answer.body);
  const error = (jsonOf(answer) as { error: { message: string } }).error;
  assert.match(error.message, why);
}

for (const protocol of ["h2c", "http1"] as const) {
  describe(`Last-Event-ID over ${protocol}`, () => {
    const sidecar = sharedSidecar();
    const streams = sidecar.streams;

    it("the initialize result offers resumable streams", async () => {
      const client = sidecar.client(protocol);
      const opened = await connect(client);
      streams.push(opened.connectionStream);
      const meta = (opened.initialize["result"] as { _meta?: { acpRemote?: { resumableStreams?: unknown } } })._meta;
      assert.equal(meta?.acpRemote?.resumableStreams, true);
    });

    it("a session stream cut mid-turn and reopened with the last id gets exactly the events it missed, then the rest of the turn", async () => {
      const client = sidecar.client(protocol);
      const { opened, sessionId, stream: first } = await connectWithSessionStream(client, streams);
      assert.equal((await prompt(client, opened.connectionId, sessionId, 2, TURN)).status, 202);

      const before: string[] = [];
      while (before.length < CUT_AFTER) {
        const text = chunkText(await first.reader.next());
        if (text !== undefined) before.push(text);
      }
      const lastId = lastIdOf(first);
      assert.ok(lastId !== undefined, "events carry ids");
      first.close();
      await first.reader.ended;
      // The reader stays away until the turn has ended on the server, so the
      // second burst is queued for it, not sent live to the reopened stream.
      await turnEnded(client, opened, sessionId);

      const second = await openStream(client, opened.connectionId, sessionId, lastId);
      assert.ok(isSse(second), `reopened: ${isSse(second) ? "" : second.status}`);
      streams.push(second);
      const rest = await readTurn(second, 2);
      assert.deepEqual(before, numbered(1, CUT_AFTER));
      assert.deepEqual(rest.texts, numbered(CUT_AFTER + 1, FIRST + SECOND), "every missed update, once, in order");
      assert.deepEqual(rest.response["result"], { stopReason: "end_turn" });
    });

    it("the connection stream reopened with its last id gets the response that followed, once", async () => {
      const client = sidecar.client(protocol);
      const opened = await connect(client);
      await newSession(client, opened, 1);
      const lastId = lastIdOf(opened.connectionStream);
      opened.connectionStream.close();
      await opened.connectionStream.reader.ended;
      assert.equal((await post(client, opened.connectionId, undefined, { jsonrpc: "2.0", id: 2, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } })).status, 202);
      const again = await openStream(client, opened.connectionId, undefined, lastId);
      assert.ok(isSse(again));
      streams.push(again);
      const next = (await again.reader.next()) as { id: number; result: { sessionId: string } };
      assert.equal(next.id, 2, "not the first session/new response a second time");
      assert.equal(typeof next.result.sessionId, "string");
    });

    it("an id of another session's stream answers 410, and that session's events stay with their own stream", async () => {
      const client = sidecar.client(protocol);
      const opened = await connect(client);
      streams.push(opened.connectionStream);
      const a = await newSession(client, opened, 1);
      const b = await newSession(client, opened, 2);
      const streamA = await openStream(client, opened.connectionId, a);
      assert.ok(isSse(streamA));
      streams.push(streamA);
      assert.equal((await prompt(client, opened.connectionId, a, 3, "echo only-a")).status, 202);
      assert.deepEqual((await readTurn(streamA, 3)).texts, ["only-a"]);
      const idOfA = lastIdOf(streamA);
      assert.ok(idOfA !== undefined);

      assertGone(await openStream(client, opened.connectionId, b, idOfA), /not an id of this stream/);
      // B's stream still opens without the foreign id, and carries only B's turn.
      const streamB = await openStream(client, opened.connectionId, b);
      assert.ok(isSse(streamB));
      streams.push(streamB);
      assert.equal((await prompt(client, opened.connectionId, b, 4, "echo only-b")).status, 202);
      assert.deepEqual((await readTurn(streamB, 4)).texts, ["only-b"]);
    });

    it("an id of the same session on an earlier connection answers 410: that connection's events are not this one's", async () => {
      const client = sidecar.client(protocol);
      const earlier = await connect(client);
      const sessionId = await newSession(client, earlier, 1);
      const stream = await openStream(client, earlier.connectionId, sessionId);
      assert.ok(isSse(stream));
      assert.equal((await prompt(client, earlier.connectionId, sessionId, 2, "echo one")).status, 202);
      await readTurn(stream, 2);
      const oldId = lastIdOf(stream);
      stream.close();
      earlier.connectionStream.close();

      const later = await connect(client);
      streams.push(later.connectionStream);
      assertGone(await openStream(client, later.connectionId, sessionId, oldId), /not an id of this stream/);
    });

    it("an id past what the stream wrote, or not an id at all, answers 410; no id opens the stream as before", async () => {
      const client = sidecar.client(protocol);
      const { opened, sessionId, stream } = await connectWithSessionStream(client, streams);
      assert.equal((await prompt(client, opened.connectionId, sessionId, 2, "echo one")).status, 202);
      await readTurn(stream, 2);
      const lastId = lastIdOf(stream);
      stream.close();
      await stream.reader.ended;
      const [tag, n] = lastId.split("-") as [string, string];
      assertGone(await openStream(client, opened.connectionId, sessionId, `${tag}-${Number(n) + 5}`), /no longer kept/);
      assertGone(await openStream(client, opened.connectionId, sessionId, "garbage"), /not an id of this stream/);
      assert.equal((await prompt(client, opened.connectionId, sessionId, 3, "echo two")).status, 202);
      const plain = await openStream(client, opened.connectionId, sessionId);
      assert.ok(isSse(plain));
      streams.push(plain);
      assert.deepEqual((await readTurn(plain, 3)).texts, ["two"], "what queued meanwhile, and not the turn before");
    });

    it("a resuming reader takes over a stream the server still holds; a second reader without an id still gets 409", async () => {
      const client = sidecar.client(protocol);
      const { opened, sessionId, stream: held } = await connectWithSessionStream(client, streams);
      streams.push(held);
      assert.equal((await prompt(client, opened.connectionId, sessionId, 2, "echo one")).status, 202);
      await readTurn(held, 2);
      const lastId = lastIdOf(held);
      const second = await openStream(client, opened.connectionId, sessionId);
      assert.ok(!isSse(second));
      assert.equal(second.status, 409);
      const resumed = await openStream(client, opened.connectionId, sessionId, lastId);
      assert.ok(isSse(resumed));
      streams.push(resumed);
      await held.reader.ended;
      assert.equal((await prompt(client, opened.connectionId, sessionId, 3, "echo two")).status, 202);
      assert.deepEqual((await readTurn(resumed, 3)).texts, ["two"]);
    });
  });
}
