// What a Streamable HTTP connection keeps for its sessions' streams: a
// session's stream (with the events it keeps for a resume) goes once the
// session has left the connection and no reader holds it, and what every
// stream of the server keeps is bounded together (DEFAULT_SSE_REPLAY_BUDGET_CHARS).
import assert from "node:assert/strict";
import { after, before, describe, it, type TestContext } from "node:test";
import { Acp, AcpExt, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { HttpConnection } from "../../sidecar/acp/http-connection.ts";
import { OutboundStream } from "../../sidecar/acp/outbound-stream.ts";
import type { OutboundSink } from "../../sidecar/http/outbound-sink.ts";
import { ReplayBudget } from "../../sidecar/acp/replay-budget.ts";
import { openStream, post } from "../helpers/acp-connection-requests.ts";
import { createClient, isSse, jsonOf } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import { sharedSidecar } from "../helpers/shared-sidecar.ts";
import { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN, type StartedServer } from "../helpers/transport-server.ts";
import { eventually } from "../helpers/eventually.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });

interface Opened {
  connectionId: string;
  connectionStream: OpenedSse;
}

async function connect(client: ProtocolClient, streams: OpenedSse[]): Promise<Opened> {
  const init = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: INITIALIZE });
  assert.equal(init.status, 200, init.body);
  const connectionId = String(init.headers["acp-connection-id"]);
  const connectionStream = await openStream(client, connectionId);
  assert.ok(isSse(connectionStream));
  streams.push(connectionStream);
  return { connectionId, connectionStream };
}

async function call(client: ProtocolClient, opened: Opened, id: number, method: string, params: unknown, sessionId?: string): Promise<Record<string, unknown>> {
  assert.equal((await post(client, opened.connectionId, sessionId, { jsonrpc: "2.0", id, method, params })).status, 202);
  const messages = await opened.connectionStream.reader.until((m) => m["id"] === id);
  return messages.pop() as Record<string, unknown>;
}

/** session/new on the connection, as request `id`; the new session's id. */
async function newSession(client: ProtocolClient, opened: Opened, id: number): Promise<string> {
  const created = await call(client, opened, id, Acp.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  return (created["result"] as { sessionId: string }).sessionId;
}

async function openSessionStream(client: ProtocolClient, opened: Opened, sessionId: string, streams: OpenedSse[]): Promise<OpenedSse> {
  const stream = await openStream(client, opened.connectionId, sessionId);
  assert.ok(isSse(stream), `session stream: ${isSse(stream) ? "" : stream.status}`);
  streams.push(stream);
  return stream;
}

/** Sends a prompt and reads its session stream up to the answer; the id of the last event read. */
async function promptAndRead(client: ProtocolClient, opened: Opened, stream: OpenedSse, sessionId: string, id: number, text: string): Promise<string> {
  const sent = await post(client, opened.connectionId, sessionId, { jsonrpc: "2.0", id, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text }] } });
  assert.equal(sent.status, 202);
  await stream.reader.until((m) => m["id"] === id);
  return stream.reader.lastEventId as string;
}

/**
 * Waits until the server no longer keeps the stream the reader read: a resume
 * from its last event answers 410, once the server has seen that reader go
 * (a resume it answers 200 before that takes the stream over, and is let go
 * again).
 */
async function untilForgotten(client: ProtocolClient, connectionId: string, sessionId: string, lastEventId: string): Promise<RawResponse> {
  let gone: RawResponse | undefined;
  await eventually(
    "a resume of the session's stream answered 410",
    async () => {
      const answer = await openStream(client, connectionId, sessionId, lastEventId);
      if (isSse(answer)) {
        answer.close();
        await answer.reader.ended;
        return false;
      }
      gone = answer;
      return true;
    },
    10_000,
  );
  return gone as RawResponse;
}

describe("a session's stream once the session left the connection", () => {
  it("regression: a connection kept a stream, with its replay log, for every session it ever used; a session that left takes its stream along", async (t: TestContext) => {
    const hub = new TransportHub();
    const connection = new HttpConnection({
      connectionId: "c-1",
      principal: { id: "alice", label: "alice" },
      profile: "h2c",
      limits: { maxQueuedMessages: 100, maxQueuedBytes: 1 << 20, replayEvents: 100, replayChars: 1 << 20 },
    });
    connection.hub = hub.connect(connection);
    t.after(() => connection.detach());
    for (let i = 0; i < 100; i++) {
      const sessionId = `s-${i}`;
      connection.send({ jsonrpc: "2.0", method: Acp.client.session.update, params: { sessionId, n: i } }, sessionId);
      connection.sessionLeft(sessionId);
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(connection.sessionStreamCount, 0);
  });

  describe("on the sidecar", () => {
    const sidecar = sharedSidecar();
    const streams = sidecar.streams;

    it("regression: a stream left by session/detach was kept with its events for the connection's life; once its reader goes it is forgotten (410)", async () => {
      const client = sidecar.client("h2c");
      const opened = await connect(client, streams);
      const sessionId = await newSession(client, opened, 1);
      const stream = await openSessionStream(client, opened, sessionId, streams);
      await promptAndRead(client, opened, stream, sessionId, 2, "echo before the detach");
      assert.equal((await post(client, opened.connectionId, sessionId, { jsonrpc: "2.0", id: 3, method: AcpExt.sessionDetach, params: { sessionId } })).status, 202);
      // The answer to session/detach still comes on the session's stream.
      const detached = (await stream.reader.until((m) => m["id"] === 3)).pop();
      assert.deepEqual(detached?.["result"], {});
      const lastId = stream.reader.lastEventId as string;
      stream.close();
      await stream.reader.ended;

      const gone = await untilForgotten(client, opened.connectionId, sessionId, lastId);
      assert.equal(gone.status, 410, gone.body);
      assert.match((jsonOf(gone) as { error: { message: string } }).error.message, /not an id of this stream/);
    });

    it("regression: a stream left by a take-over (another connection loaded the session) was kept for the connection's life; once its reader goes it is forgotten (410)", async () => {
      const client = sidecar.client("h2c");
      const first = await connect(client, streams);
      const sessionId = await newSession(client, first, 1);
      const stream = await openSessionStream(client, first, sessionId, streams);
      const lastId = await promptAndRead(client, first, stream, sessionId, 2, "echo before the take-over");

      const second = await connect(client, streams);
      await openSessionStream(client, second, sessionId, streams);
      const loaded = await call(client, second, 1, Acp.agent.session.load, { sessionId, cwd: "/tmp", mcpServers: [] }, sessionId);
      assert.ok("result" in loaded, JSON.stringify(loaded));
      stream.close();
      await stream.reader.ended;

      const gone = await untilForgotten(client, first.connectionId, sessionId, lastId);
      assert.equal(gone.status, 410, gone.body);
    });
  });
});

describe("what all SSE streams of a server keep together", () => {
  class Sink implements OutboundSink {
    write(): boolean {
      return true;
    }
    end(): void {}
    abort(): void {}
  }
  const limits = (budget: ReplayBudget) => ({ maxQueuedMessages: 100, maxQueuedBytes: 1 << 20, replayEvents: 100, replayChars: 1 << 20, replayBudget: budget });
  const update = (n: number) => ({ jsonrpc: "2.0" as const, method: Acp.client.session.update, params: { n, text: "x".repeat(40) } });

  it("past the budget, the oldest kept events of the largest log are forgotten first", () => {
    const budget = new ReplayBudget(1_000);
    const large = new OutboundStream(limits(budget), "a");
    const small = new OutboundStream(limits(budget), "b");
    large.attach(new Sink());
    small.attach(new Sink());
    for (let n = 1; n <= 10; n++) large.push(update(n));
    for (let n = 1; n <= 5; n++) small.push(update(n));
    assert.ok(budget.usedChars <= 1_000, `${budget.usedChars} characters kept`);
    assert.equal(budget.usedChars, large.keptChars + small.keptChars);
    assert.equal(large.keeps(0), false, "the large log's oldest event is gone");
    assert.equal(large.keeps(10), true, "its newest is there");
    assert.equal(small.keeps(0), true, "the small log keeps all it wrote");
    large.close();
    small.close();
    assert.equal(budget.usedChars, 0, "closed streams give their share back");
  });

  for (const protocol of ["h2c", "http1"] as const) {
    describe(`over ${protocol}`, () => {
      let server: StartedServer;
      let client: ProtocolClient;
      const streams: OpenedSse[] = [];

      before(async () => {
        server = await startTransportServer({ hub: new TransportHub(), limits: { sseReplayBudgetChars: 64 * 1024 } });
      });
      after(async () => {
        for (const stream of streams) stream.close();
        await client?.close();
        await server.close();
      });

      it("regression: each stream kept up to 4 Mi characters whatever the server held; past the server's budget the largest log loses its oldest events, and a resume from them answers 410", async () => {
        client = createClient(protocol, server.url);
        const opened = await connect(client, streams);
        const sessions: string[] = [];
        for (const id of [1, 2]) sessions.push(((await call(client, opened, id, Acp.agent.session.new, { cwd: "/tmp", mcpServers: [] }))["result"] as { sessionId: string }).sessionId);
        const [a, b] = sessions as [string, string];
        const streamA = await openSessionStream(client, opened, a, streams);
        const streamB = await openSessionStream(client, opened, b, streams);

        assert.equal((await post(client, opened.connectionId, a, { jsonrpc: "2.0", id: 3, method: Acp.agent.session.prompt, params: { sessionId: a, prompt: [{ type: "text", text: "flood 40 1024" }] } })).status, 202);
        await streamA.reader.next();
        const firstOfA = streamA.reader.lastEventId as string;
        await streamA.reader.until((m) => m["id"] === 3);
        const lastOfA = streamA.reader.lastEventId as string;
        // 40 KiB of A alone is within the budget; another 40 KiB of B is not.
        await promptAndRead(client, opened, streamB, b, 4, "flood 40 1024");

        const gone = await openStream(client, opened.connectionId, a, firstOfA);
        if (isSse(gone)) streams.push(gone);
        assert.ok(!isSse(gone), "A's oldest events were still kept");
        assert.equal(gone.status, 410, gone.body);
        assert.match((jsonOf(gone) as { error: { message: string } }).error.message, /no longer kept/);
        // What A wrote last is still there for a resume.
        const resumed = await openStream(client, opened.connectionId, a, lastOfA);
        assert.ok(isSse(resumed), `a resume from A's last event: ${isSse(resumed) ? "" : resumed.status}`);
        streams.push(resumed);
      });
    });
  }
});
