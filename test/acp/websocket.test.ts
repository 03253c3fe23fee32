// The WebSocket profile of /acp, row by row (spec: "GET /acp with Upgrade:
// websocket", the routing summary's upgrade row, the state table's WebSocket
// rows), with authentication and origin checks on the handshake, over ws://
// (cleartext, behind the sniffer) and wss:// (TLS, allowHTTP1), behind the
// small test hub and behind the real sidecar (hub and fixture agent).
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { Acp, AFFINITY_COOKIE, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { BACKENDS } from "../helpers/sidecar-server.ts";
import { startTransportServer, OTHER_TOKEN, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";
import { TransportHub } from "../helpers/transport-hub.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";
import type { WsRefusal } from "../helpers/ws-client.ts";
import { eventually } from "../helpers/eventually.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const initialize = (id: number | string = 0) => ({
  jsonrpc: "2.0",
  id,
  method: Acp.agent.initialize,
  params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} },
});

function assertRefusal(value: WsTestClient | WsRefusal, status: number, code: number): WsRefusal {
  assert.ok(isRefusal(value), "the handshake is refused");
  assert.equal(value.status, status, value.body);
  const body = JSON.parse(value.body) as { id: unknown; error: { code: number } };
  assert.equal(body.id, null);
  assert.equal(body.error.code, code);
  return value;
}

/** Reads until the message with this id (notifications before it are skipped). */
async function answerTo(ws: WsTestClient, id: number): Promise<Record<string, unknown>> {
  for (;;) {
    const m = await ws.next();
    if (m["id"] === id) return m;
  }
}

for (const backend of BACKENDS)
for (const tls of [false, true]) {
  describe(`WebSocket profile over ${tls ? "wss (TLS)" : "ws (cleartext)"}, ${backend.name}`, () => {
    let server: StartedServer;
    const open: WsTestClient[] = [];
    const connect = async (options: { headers?: Record<string, string>; protocols?: string[]; query?: string } = {}) => {
      const result = await WsTestClient.open(`${server.acpUrl}${options.query ?? ""}`, {
        headers: options.headers ?? AUTH,
        ...(options.protocols !== undefined ? { protocols: options.protocols } : {}),
        ...(server.ca !== undefined ? { ca: server.ca } : {}),
      });
      if (!isRefusal(result)) open.push(result);
      return result;
    };
    const connected = async (options: Parameters<typeof connect>[0] = {}) => {
      const result = await connect(options);
      assert.ok(!isRefusal(result), `handshake refused: ${isRefusal(result) ? `${result.status} ${result.body}` : ""}`);
      return result as WsTestClient;
    };
    const initialized = async () => {
      const ws = await connected();
      ws.send(initialize());
      const answer = await ws.next();
      assert.ok("result" in answer, JSON.stringify(answer));
      return ws;
    };

    beforeEach(async () => {
      server = await backend.start({ tls });
    });
    afterEach(async () => {
      for (const ws of open.splice(0)) ws.ws.terminate();
      await server.close();
    });

    it("GET | Upgrade: websocket | upgrade to WebSocket: 101 with Acp-Connection-Id (and the affinity cookie)", async () => {
      const ws = await connected();
      const connectionId = ws.headers["acp-connection-id"];
      assert.equal(typeof connectionId, "string");
      const cookie = [ws.headers["set-cookie"] ?? []].flat().join("\n");
      assert.match(cookie, new RegExp(`^${AFFINITY_COOKIE}=`));
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.equal(/Secure/.test(cookie), tls);
    });

    it("the first message is initialize: the result carries the connection id of the 101", async () => {
      const ws = await connected();
      ws.send(initialize(1));
      const answer = (await ws.next()) as { id: number; result: { connectionId: string; agentCapabilities: unknown } };
      assert.equal(answer.id, 1);
      assert.equal(answer.result.connectionId, ws.headers["acp-connection-id"]);
    });

    it("a first message other than initialize: a JSON-RPC error, then the socket closes", async () => {
      const ws = await connected();
      ws.send({ jsonrpc: "2.0", id: 5, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
      const answer = (await ws.next()) as { id: number; error: { code: number } };
      assert.equal(answer.id, 5);
      assert.equal(answer.error.code, ErrorCode.InvalidRequest);
      const { code } = await ws.closed;
      assert.equal(code, 1008);
    });

    it("a second initialize is rejected; the connection goes on", async () => {
      const ws = await initialized();
      ws.send(initialize(2));
      const answer = (await ws.next()) as { id: number; error: { code: number } };
      assert.equal(answer.id, 2);
      assert.equal(answer.error.code, ErrorCode.InvalidRequest);
      ws.send({ jsonrpc: "2.0", id: 3, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
      assert.equal((await ws.next())["id"], 3);
    });

    it("binary frames are ignored", async () => {
      const ws = await connected();
      ws.ws.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 9, method: Acp.agent.session.new })), { binary: true });
      ws.send(initialize(1));
      const answer = await ws.next();
      assert.equal(answer["id"], 1, "the binary frame neither counted as the first message nor got an answer");
    });

    it("a JSON array (batch): one -32600 error with id null, as the SDK client answers one", async () => {
      const ws = await initialized();
      ws.send([{ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new }]);
      const answer = (await ws.next()) as { id: unknown; error: { code: number } };
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, ErrorCode.InvalidRequest);
    });

    it("malformed JSON: -32700 with id null", async () => {
      const ws = await initialized();
      ws.send('{"jsonrpc": "2.0", "id": 1,');
      const answer = (await ws.next()) as { id: unknown; error: { code: number } };
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, ErrorCode.ParseError);
    });

    it("messages of every scope travel on the one socket: session/new, then the prompt's updates and response", async () => {
      const ws = await initialized();
      ws.send({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
      const created = (await ws.next()) as { result: { sessionId: string } };
      ws.send({ jsonrpc: "2.0", id: 3, method: Acp.agent.session.prompt, params: { sessionId: created.result.sessionId, prompt: [{ type: "text", text: "echo hi" }] } });
      const update = await ws.next();
      assert.equal(update["method"], Acp.client.session.update);
      const answer = (await answerTo(ws, 3)) as { result: { stopReason: string } };
      assert.equal(answer.result.stopReason, "end_turn");
    });

    it("WebSocket connection | WebSocket disconnect | the server detaches the connection; its session stays loadable", async () => {
      const ws = await initialized();
      const connectionId = String(ws.headers["acp-connection-id"]);
      ws.send({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
      const sessionId = ((await ws.next()) as { result: { sessionId: string } }).result.sessionId;
      ws.ws.terminate();
      await eventually("the detach", () => !(server.hub as TransportHub).status().connections.some((c) => c.connectionId === connectionId));
      const session = (server.hub as TransportHub).status().sessions.find((s) => s.sessionId === sessionId);
      assert.equal(session?.state, "detached", "a drop is not a DELETE: the session stays");
      const again = await initialized();
      again.send({ jsonrpc: "2.0", id: 4, method: Acp.agent.session.load, params: { sessionId, cwd: "/tmp", mcpServers: [] } });
      assert.ok("result" in (await answerTo(again, 4)), "it loads on a new connection");
    });

    it("server shutdown closes the socket with 1001 and detaches the connection", async () => {
      const ws = await initialized();
      const connectionId = String(ws.headers["acp-connection-id"]);
      const closed = ws.closed;
      await server.close();
      assert.equal((await closed).code, 1001);
      if (server.hub instanceof TransportHub) {
        assert.ok(server.hub.events.detached.includes(connectionId), "detached");
        assert.ok(!server.hub.events.closed.includes(connectionId), "not closed");
      }
    });

    describe("authentication on the handshake", () => {
      it("Authorization: Bearer is accepted", async () => {
        await connected({ headers: AUTH });
      });

      it("the subprotocol acp.bearer.<token> is accepted and echoed back", async () => {
        const ws = await connected({ headers: {}, protocols: [`acp.bearer.${TOKEN}`] });
        assert.equal(ws.ws.protocol, `acp.bearer.${TOKEN}`);
      });

      it("the query parameter access_token is accepted", async () => {
        await connected({ headers: {}, query: `?access_token=${TOKEN}` });
      });

      it("missing or wrong token: 401 with WWW-Authenticate: Bearer, before the upgrade", async () => {
        const attempts: { headers: Record<string, string>; protocols?: string[]; query?: string }[] = [
          { headers: {} },
          { headers: { authorization: "Bearer nope" } },
          { headers: {}, protocols: ["acp.bearer.nope"] },
          { headers: {}, query: "?access_token=nope" },
        ];
        for (const options of attempts) {
          const refusal = assertRefusal(await connect(options), 401, ErrorCode.AuthRequired);
          assert.match(String(refusal.headers["www-authenticate"]), /^Bearer realm="acp-remote"/);
        }
      });

      it("a token of another principal gets its own connection", async () => {
        await connected({ headers: { authorization: `Bearer ${OTHER_TOKEN}` } });
      });

      it("bad Origin: 403 before the upgrade", async () => {
        assertRefusal(await connect({ headers: { ...AUTH, origin: "https://evil.example" } }), 403, ErrorCode.InvalidRequest);
      });

      it("bad Host on a loopback server: 403 before the upgrade", async () => {
        assertRefusal(await connect({ headers: { ...AUTH, host: "rebound.example" } }), 403, ErrorCode.InvalidRequest);
      });

      it("unsupported Acp-Protocol-Version: 400 before the upgrade", async () => {
        assertRefusal(await connect({ headers: { ...AUTH, "acp-protocol-version": "999" } }), 400, ErrorCode.InvalidRequest);
      });

      it("?agent= names an unknown agent: 404 before the upgrade", async () => {
        assertRefusal(await connect({ query: "?agent=nope" }), 404, ErrorCode.ResourceNotFound);
      });

      it("an upgrade on another path: 404", async () => {
        const result = await WsTestClient.open(`${server.url}/elsewhere`, { headers: AUTH, ...(server.ca !== undefined ? { ca: server.ca } : {}) });
        assertRefusal(result, 404, ErrorCode.ResourceNotFound);
      });
    });
  });
}

describe("WebSocket limits (test hub)", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  const initialized = async () => {
    const ws = await WsTestClient.open(server.acpUrl, { headers: AUTH });
    assert.ok(!isRefusal(ws));
    ws.send(initialize());
    assert.ok("result" in (await ws.next()));
    return ws;
  };

  it("a message larger than maxBodyBytes closes the socket with 1009", async () => {
    server = await startTransportServer({ limits: { maxBodyBytes: 64 * 1024 } });
    const ws = await initialized();
    ws.send({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.new, params: { cwd: "x".repeat(128 * 1024), mcpServers: [] } });
    assert.equal((await ws.closed).code, 1009);
  });

  it("the server pings every keepAliveMs; ws answers with pongs and the socket stays open", async () => {
    server = await startTransportServer({ limits: { keepAliveMs: 200 } });
    const ws = await initialized();
    let pings = 0;
    ws.ws.on("ping", () => {
      pings += 1;
    });
    await eventually("two pings", () => pings >= 2);
    ws.send({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
    assert.equal((await ws.next())["id"], 2);
    await ws.close();
  });

  it("a peer that stops answering pings is dropped", async () => {
    server = await startTransportServer({ limits: { keepAliveMs: 200 } });
    const ws = await initialized();
    // Stop reading: the pings go unanswered.
    ws.ws.pause();
    const connectionId = String(ws.headers["acp-connection-id"]);
    const hub = server.hub as TransportHub;
    await eventually("the drop", () => hub.events.detached.includes(connectionId));
    ws.ws.terminate();
  });
});
