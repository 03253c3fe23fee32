// Races between the requests of one Streamable HTTP connection: a GET whose
// session lookup (a shared store's directory, on a node of several) is still
// under way when a DELETE ends the connection, and a reader taken over by a
// resuming one that drains after it was dropped.
import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { OutboundStream } from "../../sidecar/acp/outbound-stream.ts";
import type { OutboundSink } from "../../sidecar/http/outbound-sink.ts";
import { createClient, isSse } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN, type StartedServer } from "../helpers/transport-server.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });

function openStream(client: ProtocolClient, connectionId: string, sessionId?: string): Promise<OpenedSse | RawResponse> {
  return client.openSse("/acp", {
    ...AUTH,
    accept: "text/event-stream",
    "acp-connection-id": connectionId,
    ...(sessionId === undefined ? {} : { "acp-session-id": sessionId }),
  });
}

for (const protocol of ["h2c", "http1"] as const) {
  describe(`a GET and a DELETE of one connection over ${protocol}`, () => {
    let hub: TransportHub;
    let server: StartedServer;
    let client: ProtocolClient | undefined;
    const streams: OpenedSse[] = [];

    before(async () => {
      hub = new TransportHub();
      server = await startTransportServer({ hub });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await client?.close();
      await server.close();
    });

    async function connect(): Promise<{ connectionId: string; connectionStream: OpenedSse }> {
      const init = await (client as ProtocolClient).request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
      assert.equal(init.status, 200, init.body);
      const connectionId = String(init.headers["acp-connection-id"]);
      const connectionStream = await openStream(client as ProtocolClient, connectionId);
      assert.ok(isSse(connectionStream));
      streams.push(connectionStream);
      return { connectionId, connectionStream };
    }

    it("regression: a GET that races a DELETE answered 200 with an empty stream; it answers 404", async () => {
      client = createClient(protocol, server.url);
      // The session is another connection's, and stays: the GET names it before a session/load (design, decision 2).
      const other = await connect();
      const made = await client.request("POST", "/acp", {
        headers: { ...AUTH, "content-type": "application/json", "acp-connection-id": other.connectionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } }),
      });
      assert.equal(made.status, 202);
      const { result } = (await other.connectionStream.reader.next()) as { result: { sessionId: string } };
      const { connectionId } = await connect();

      // The GET waits in its session lookup while the DELETE ends its connection.
      let release = (): void => undefined;
      hub.resolveGate = new Promise<void>((resolve) => (release = resolve));
      const lookingUp = once(hub.resolving, "lookup");
      const get = openStream(client, connectionId, result.sessionId);
      await lookingUp;
      const deleted = await client.request("DELETE", "/acp", { headers: { ...AUTH, "acp-connection-id": connectionId } });
      assert.equal(deleted.status, 202);
      hub.resolveGate = undefined;
      release();

      const answer = await get;
      if (isSse(answer)) streams.push(answer);
      assert.ok(!isSse(answer), `the stream opened with ${isSse(answer) ? answer.status : ""} on a deleted connection`);
      assert.equal(answer.status, 404, answer.body);
    });
  });
}

class Sink implements OutboundSink {
  readonly written: number[] = [];
  /** write() answers false once this many messages are held (a full socket). */
  capacity: number;
  constructor(capacity: number) {
    this.capacity = capacity;
  }
  write(json: string): boolean {
    this.written.push((JSON.parse(json) as { params: { n: number } }).params.n);
    return this.written.length < this.capacity;
  }
  end(): void {}
  abort(): void {}
}

const update = (n: number) => ({ jsonrpc: "2.0" as const, method: Acp.client.session.update, params: { n } });

describe("a reader taken over by a resuming one", () => {
  it("regression: the dropped reader's late drain resumed the reader that took its place past its full socket; it no longer does", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 100, maxQueuedBytes: 1 << 20, replayEvents: 100, replayChars: 1 << 20 });
    const dropped = new Sink(1);
    assert.equal(stream.attach(dropped), "attached");
    stream.push(update(1));
    // The reader comes back with the last id it got: it takes the stream over.
    stream.dropReader();
    const current = new Sink(2);
    assert.equal(stream.attach(current, 1), "attached");
    for (let n = 2; n <= 5; n++) stream.push(update(n));
    assert.deepEqual(current.written, [2, 3], "the new reader's socket is full after two");

    stream.resume(dropped);
    assert.deepEqual(current.written, [2, 3], "nothing written into the full socket on the old reader's drain");
    current.capacity = Infinity;
    stream.resume(current);
    assert.deepEqual(current.written, [2, 3, 4, 5], "its own drain goes on");
  });
});
