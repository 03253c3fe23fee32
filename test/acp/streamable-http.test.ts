// The Streamable HTTP profile of /acp, row by row: the spec's "Routing
// summary", "Message flow" and "Errors" tables, then bad input and the
// validation order, each over h2c, h2 (TLS), HTTP/1.1 and HTTP/1.1 over TLS
// (node:http2, node:http/https; plus undici's HTTP/2 and h2c clients on the
// test hub), and each behind two backends: the small test hub, and the real sidecar
// (`serve()`, the hub, the fixture agent process). Case names quote the spec's rows.
import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { Acp, AFFINITY_COOKIE, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { createClient, HTTP_PROTOCOLS, isSse, jsonOf, UNDICI_PROTOCOLS } from "../helpers/http-clients.ts";
import type { OpenedSse, ProtocolClient, RawResponse } from "../helpers/http-clients.ts";
import { BACKENDS } from "../helpers/sidecar-server.ts";
import { OTHER_TOKEN, startTransportServer, testTls, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };

const initializeRequest = (id: number | string = 0) => ({
  jsonrpc: "2.0",
  id,
  method: Acp.agent.initialize,
  params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} },
});
const newSessionRequest = (id: number) => ({ jsonrpc: "2.0", id, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } });
const promptRequest = (id: number, sessionId: string, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: Acp.agent.session.prompt,
  params: { sessionId, prompt: [{ type: "text", text }] },
});

/** An error answer: the status, JSON, a JSON-RPC error with id null and the paired code. */
function assertError(response: RawResponse, status: number, code: number): void {
  assert.equal(response.status, status, `status (body: ${response.body})`);
  assert.match(String(response.headers["content-type"]), /^application\/json/);
  const body = jsonOf(response);
  assert.equal(body["jsonrpc"], "2.0");
  assert.equal(body["id"], null);
  assert.equal((body["error"] as { code: number }).code, code);
}

/** What every row needs: the server, a client of the protocol under test, and the flow's first steps. */
class Flow {
  readonly server: StartedServer;
  readonly client: ProtocolClient;
  readonly #streams: OpenedSse[] = [];

  constructor(server: StartedServer, client: ProtocolClient) {
    this.server = server;
    this.client = client;
  }

  post(body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
    return this.client.request("POST", "/acp", {
      headers: { ...AUTH, ...JSON_TYPE, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  async initialize(headers: Record<string, string> = {}): Promise<string> {
    const response = await this.post(initializeRequest(), headers);
    assert.equal(response.status, 200, response.body);
    return String(response.headers["acp-connection-id"]);
  }

  async stream(connectionId: string, sessionId?: string, headers: Record<string, string> = {}): Promise<OpenedSse> {
    const opened = await this.openSse(connectionId, sessionId, headers);
    assert.ok(isSse(opened), `GET answered ${(opened as RawResponse).status}: ${(opened as RawResponse).body}`);
    return opened;
  }

  async openSse(connectionId: string | undefined, sessionId?: string, headers: Record<string, string> = {}): Promise<OpenedSse | RawResponse> {
    const opened = await this.client.openSse("/acp", {
      ...AUTH,
      accept: "text/event-stream",
      ...(connectionId !== undefined ? { "acp-connection-id": connectionId } : {}),
      ...(sessionId !== undefined ? { "acp-session-id": sessionId } : {}),
      ...headers,
    });
    if (isSse(opened)) this.#streams.push(opened);
    return opened;
  }

  /** initialize, GET the connection stream, session/new: the spec's flow steps 1 to 3. */
  async session(headers: Record<string, string> = {}): Promise<{ connectionId: string; sessionId: string; connectionStream: OpenedSse }> {
    const connectionId = await this.initialize(headers);
    const connectionStream = await this.stream(connectionId, undefined, headers);
    const posted = await this.post(newSessionRequest(1), { "acp-connection-id": connectionId, ...headers });
    assert.equal(posted.status, 202, posted.body);
    const result = (await connectionStream.reader.next()) as { id: number; result: { sessionId: string } };
    assert.equal(result.id, 1);
    return { connectionId, sessionId: result.result.sessionId, connectionStream };
  }

  closeStreams(): void {
    for (const s of this.#streams) s.close();
  }
}

/** The text of `session/update` message chunks among messages. */
function chunks(messages: Record<string, unknown>[], kind = "agent_message_chunk"): string[] {
  return messages
    .map((m) => (m["params"] as { update?: { sessionUpdate?: string; content?: { text?: string } } } | undefined)?.update)
    .filter((u) => u?.sessionUpdate === kind)
    .map((u) => u?.content?.text ?? "");
}

for (const backend of BACKENDS)
for (const { protocol, tls } of backend.everyClient ? [...HTTP_PROTOCOLS, ...UNDICI_PROTOCOLS] : HTTP_PROTOCOLS) {
  describe(`Streamable HTTP over ${protocol}, ${backend.name}`, () => {
    let flow: Flow;
    before(async () => {
      if (tls) await testTls();
    });
    beforeEach(async () => {
      const server = await backend.start({ tls });
      flow = new Flow(server, createClient(protocol, server.url, server.ca !== undefined ? { ca: server.ca } : {}));
    });
    afterEach(async () => {
      flow.closeStreams();
      await flow.client.close();
      await flow.server.close();
    });

    describe("Routing summary", () => {
      it("POST | initialize without Acp-Connection-Id | 200 with JSON body", async () => {
        const response = await flow.post(initializeRequest(7));
        assert.equal(response.status, 200);
        assert.match(String(response.headers["content-type"]), /^application\/json/);
        const connectionId = response.headers["acp-connection-id"];
        assert.equal(typeof connectionId, "string");
        const body = jsonOf(response) as { id: number; result: { connectionId: string; agentCapabilities: unknown } };
        assert.equal(body.id, 7);
        assert.equal(body.result.connectionId, connectionId, "result.connectionId equals the header");
        assert.ok(body.result.agentCapabilities !== undefined, "the capabilities are in the result");
        // Design, decision 7: the affinity cookie.
        const cookie = [response.headers["set-cookie"] ?? []].flat().join("\n");
        assert.match(cookie, new RegExp(`^${AFFINITY_COOKIE}=`));
        assert.match(cookie, /HttpOnly/);
        assert.match(cookie, /SameSite=Strict/);
        assert.match(cookie, /Path=\/acp/);
        assert.equal(/Secure/.test(cookie), tls, "Secure exactly on TLS");
      });

      it("POST | any other message | 202 Accepted, empty body", async () => {
        const connectionId = await flow.initialize();
        const response = await flow.post(newSessionRequest(1), { "acp-connection-id": connectionId });
        assert.equal(response.status, 202);
        assert.equal(response.body, "");
      });

      it("GET | no Upgrade header | open SSE stream", async () => {
        const connectionId = await flow.initialize();
        const opened = await flow.stream(connectionId);
        assert.equal(opened.status, 200);
        assert.match(String(opened.headers["content-type"]), /^text\/event-stream/);
        await flow.post(newSessionRequest(3), { "acp-connection-id": connectionId });
        const message = (await opened.reader.next()) as { id: number };
        assert.equal(message.id, 3, "a message arrives on the stream as `data: <json>`");
      });

      it("DELETE | Acp-Connection-Id present | terminate connection, 202", async () => {
        const { connectionId, sessionId, connectionStream } = await flow.session();
        const sessionStream = await flow.stream(connectionId, sessionId);
        const response = await flow.client.request("DELETE", "/acp", { headers: { ...AUTH, "acp-connection-id": connectionId } });
        assert.equal(response.status, 202);
        assert.equal(response.body, "");
        // "its GET streams close"
        await connectionStream.reader.ended;
        await sessionStream.reader.ended;
        // "The connection and all of its sessions are terminated"
        assertError(await flow.post(newSessionRequest(2), { "acp-connection-id": connectionId }), 404, ErrorCode.ResourceNotFound);
        const again = await flow.initialize();
        assertError(await flow.openSse(again, sessionId) as RawResponse, 404, ErrorCode.ResourceNotFound);
      });
    });

    describe("Message flow (Streamable HTTP)", () => {
      it("3. POST session/new returns 202; the result with sessionId arrives on the connection-scoped stream", async () => {
        const { sessionId } = await flow.session();
        assert.equal(typeof sessionId, "string");
        assert.ok(sessionId.length > 0);
      });

      it("5. POST session/prompt (both headers) returns 202; notifications and the response arrive on the session-scoped stream", async () => {
        const { connectionId, sessionId } = await flow.session();
        const sessionStream = await flow.stream(connectionId, sessionId);
        const response = await flow.post(promptRequest(5, sessionId, "echo hello"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        assert.equal(response.status, 202);
        assert.equal(response.body, "");
        const seen = await sessionStream.reader.until((m) => m["id"] === 5);
        const updates = seen.filter((m) => m["method"] === Acp.client.session.update);
        assert.ok(updates.length > 0, "notifications first");
        assert.ok(updates.every((u) => (u["params"] as { sessionId: string }).sessionId === sessionId));
        assert.deepEqual(chunks(seen), ["hello"]);
        const result = seen.at(-1) as { id: number; result: { stopReason: string } };
        assert.equal(result.result.stopReason, "end_turn", "finally the response with the request's id");
      });

      it("4. a session stream opened before its first message gets what was sent before the GET", async () => {
        const { connectionId, sessionId } = await flow.session();
        await flow.post(promptRequest(6, sessionId, "echo early"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        const sessionStream = await flow.stream(connectionId, sessionId);
        const seen = await sessionStream.reader.until((m) => m["id"] === 6);
        assert.deepEqual(chunks(seen), ["early"], "the update and the response, buffered until the GET");
      });

      it("6. request_permission on the session-scoped stream; the client's POST (both headers) with the same id and an outcome returns 202", async () => {
        const { connectionId, sessionId } = await flow.session();
        const sessionStream = await flow.stream(connectionId, sessionId);
        await flow.post(promptRequest(8, sessionId, "permission Edit main.ts"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        const [request] = (await sessionStream.reader.until((m) => m["method"] === Acp.client.session.requestPermission)).slice(-1) as {
          id: string;
          params: { sessionId: string };
        }[];
        assert.equal(request?.params.sessionId, sessionId);
        const answer = { jsonrpc: "2.0", id: request?.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } };
        const response = await flow.post(answer, { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        assert.equal(response.status, 202);
        const seen = await sessionStream.reader.until((m) => m["id"] === 8);
        assert.ok(chunks(seen).includes("outcome: selected allow_once"), "the agent got the answer");
      });

      it("7. POST session/cancel (a notification) returns 202", async () => {
        const { connectionId, sessionId } = await flow.session();
        const response = await flow.post(
          { jsonrpc: "2.0", method: Acp.agent.session.cancel, params: { sessionId } },
          { "acp-connection-id": connectionId, "acp-session-id": sessionId },
        );
        assert.equal(response.status, 202);
        assert.equal(response.body, "");
      });

      it("8. To resume: POST initialize (new connection), GET connection stream, GET session stream, then POST session/load", async () => {
        const first = await flow.session();
        const firstSessionStream = await flow.stream(first.connectionId, first.sessionId);
        await flow.post(promptRequest(9, first.sessionId, "echo remember me"), { "acp-connection-id": first.connectionId, "acp-session-id": first.sessionId });
        await firstSessionStream.reader.until((m) => m["id"] === 9);
        // The client drops: its streams go, the server detaches after the idle time; here the client just moves on.
        const connectionId = await flow.initialize();
        const connectionStream = await flow.stream(connectionId);
        // Design, decision 2: the session stream may be opened before session/load.
        const sessionStream = await flow.stream(connectionId, first.sessionId);
        const load = { jsonrpc: "2.0", id: 10, method: Acp.agent.session.load, params: { sessionId: first.sessionId, cwd: "/tmp", mcpServers: [] } };
        const response = await flow.post(load, { "acp-connection-id": connectionId, "acp-session-id": first.sessionId });
        assert.equal(response.status, 202, response.body);
        const replayed = await sessionStream.reader.until((m) => chunks([m], "user_message_chunk").length > 0);
        assert.deepEqual(chunks(replayed, "user_message_chunk"), ["echo remember me"], "history is replayed as notifications on the session-scoped stream");
        const onConnection = await connectionStream.reader.until((m) => m["id"] === 10);
        assert.ok("result" in (onConnection.at(-1) ?? {}), "the session/load result arrives on the connection-scoped stream");
      });
    });

    describe("Errors", () => {
      it("400 | POST (non-initialize) without Acp-Connection-Id", async () => {
        assertError(await flow.post(newSessionRequest(1)), 400, ErrorCode.InvalidRequest);
      });

      it("400 | GET (non-upgrade) without Acp-Connection-Id", async () => {
        assertError((await flow.openSse(undefined)) as RawResponse, 400, ErrorCode.InvalidRequest);
      });

      it("400 | DELETE without Acp-Connection-Id", async () => {
        assertError(await flow.client.request("DELETE", "/acp", { headers: AUTH }), 400, ErrorCode.InvalidRequest);
      });

      for (const method of [Acp.agent.session.prompt, Acp.agent.session.cancel]) {
        it(`400 | session-scoped POST without Acp-Session-Id (${method})`, async () => {
          const { connectionId, sessionId } = await flow.session();
          const message = method === Acp.agent.session.prompt ? promptRequest(2, sessionId, "x") : { jsonrpc: "2.0", method, params: { sessionId } };
          assertError(await flow.post(message, { "acp-connection-id": connectionId }), 400, ErrorCode.InvalidRequest);
        });
      }

      it("400 | session-scoped POST without Acp-Session-Id (a permission response)", async () => {
        const { connectionId, sessionId } = await flow.session();
        const sessionStream = await flow.stream(connectionId, sessionId);
        await flow.post(promptRequest(8, sessionId, "permission Edit main.ts"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        const [request] = (await sessionStream.reader.until((m) => m["method"] === Acp.client.session.requestPermission)).slice(-1);
        const answer = { jsonrpc: "2.0", id: request?.["id"], result: { outcome: { outcome: "cancelled" } } };
        assertError(await flow.post(answer, { "acp-connection-id": connectionId }), 400, ErrorCode.InvalidRequest);
      });

      it("404 | Acp-Connection-Id unknown (POST, GET and DELETE)", async () => {
        const unknown = { "acp-connection-id": "no-such-connection" };
        assertError(await flow.post(newSessionRequest(1), unknown), 404, ErrorCode.ResourceNotFound);
        assertError((await flow.openSse("no-such-connection")) as RawResponse, 404, ErrorCode.ResourceNotFound);
        assertError(await flow.client.request("DELETE", "/acp", { headers: { ...AUTH, ...unknown } }), 404, ErrorCode.ResourceNotFound);
      });

      it("404 | Acp-Session-Id unknown for the connection (POST and GET)", async () => {
        const { connectionId } = await flow.session();
        assertError(
          await flow.post(promptRequest(2, "sess-unknown", "x"), { "acp-connection-id": connectionId, "acp-session-id": "sess-unknown" }),
          404,
          ErrorCode.ResourceNotFound,
        );
        assertError((await flow.openSse(connectionId, "sess-unknown")) as RawResponse, 404, ErrorCode.ResourceNotFound);
      });

      it("406 | GET Accept lacks text/event-stream", async () => {
        const connectionId = await flow.initialize();
        const response = await flow.openSse(connectionId, undefined, { accept: "application/json" });
        assertError(response as RawResponse, 406, ErrorCode.InvalidRequest);
      });

      it("415 | POST Content-Type is not application/json", async () => {
        const connectionId = await flow.initialize();
        for (const contentType of ["text/plain", "application/x-www-form-urlencoded"]) {
          const response = await flow.post(newSessionRequest(1), { "acp-connection-id": connectionId, "content-type": contentType });
          assertError(response, 415, ErrorCode.InvalidRequest);
        }
        const withCharset = await flow.post(newSessionRequest(1), { "acp-connection-id": connectionId, "content-type": "application/json; charset=utf-8" });
        assert.equal(withCharset.status, 202, "parameters of application/json are fine");
      });

      it("501 | Batch JSON-RPC request", async () => {
        const connectionId = await flow.initialize();
        assertError(await flow.post([newSessionRequest(1), newSessionRequest(2)], { "acp-connection-id": connectionId }), 501, ErrorCode.InvalidRequest);
      });
    });

    describe("Bad input", () => {
      it("malformed JSON: 400 with -32700", async () => {
        const connectionId = await flow.initialize();
        assertError(await flow.post('{"jsonrpc": "2.0", "id": 1, "method": ', { "acp-connection-id": connectionId }), 400, ErrorCode.ParseError);
      });

      it("not a JSON-RPC message: 400 with -32600", async () => {
        const connectionId = await flow.initialize();
        for (const body of [{ id: 1, method: "x" }, { jsonrpc: "2.0" }, 42, { jsonrpc: "2.0", id: {}, method: "x" }]) {
          assertError(await flow.post(body, { "acp-connection-id": connectionId }), 400, ErrorCode.InvalidRequest);
        }
      });

      it("initialize with an Acp-Connection-Id: 400", async () => {
        const connectionId = await flow.initialize();
        assertError(await flow.post(initializeRequest(1), { "acp-connection-id": connectionId }), 400, ErrorCode.InvalidRequest);
      });

      it("Acp-Session-Id and params.sessionId differ: 400", async () => {
        const { connectionId, sessionId } = await flow.session();
        const other = await flow.post(newSessionRequest(4), { "acp-connection-id": connectionId });
        assert.equal(other.status, 202);
        const response = await flow.post(promptRequest(2, "sess-other", "x"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        assertError(response, 400, ErrorCode.InvalidRequest);
      });

      it("a permission response under another session's Acp-Session-Id: 400", async () => {
        const { connectionId, sessionId, connectionStream } = await flow.session();
        const other = await flow.post(newSessionRequest(4), { "acp-connection-id": connectionId });
        assert.equal(other.status, 202);
        const created = (await connectionStream.reader.until((m) => m["id"] === 4)).at(-1) as { result: { sessionId: string } };
        const otherSessionId = created.result.sessionId;
        const sessionStream = await flow.stream(connectionId, sessionId);
        await flow.post(promptRequest(8, sessionId, "permission Edit main.ts"), { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        const [request] = (await sessionStream.reader.until((m) => m["method"] === Acp.client.session.requestPermission)).slice(-1);
        const answer = { jsonrpc: "2.0", id: request?.["id"], result: { outcome: { outcome: "cancelled" } } };
        assertError(await flow.post(answer, { "acp-connection-id": connectionId, "acp-session-id": otherSessionId }), 400, ErrorCode.InvalidRequest);
      });

      it("a session id of another principal (two tokens): 404, as unknown", async () => {
        const mine = await flow.session();
        const theirs = await flow.initialize({ authorization: `Bearer ${OTHER_TOKEN}` });
        const headers = { authorization: `Bearer ${OTHER_TOKEN}`, "acp-connection-id": theirs, "acp-session-id": mine.sessionId };
        assertError(await flow.post(promptRequest(2, mine.sessionId, "x"), headers), 404, ErrorCode.ResourceNotFound);
        const load = { jsonrpc: "2.0", id: 3, method: Acp.agent.session.load, params: { sessionId: mine.sessionId, cwd: "/tmp", mcpServers: [] } };
        assertError(await flow.post(load, headers), 404, ErrorCode.ResourceNotFound);
        const opened = await flow.openSse(theirs, mine.sessionId, { authorization: `Bearer ${OTHER_TOKEN}` });
        assertError(opened as RawResponse, 404, ErrorCode.ResourceNotFound);
      });

      it("a connection id used with another principal's token: 404, as unknown", async () => {
        const connectionId = await flow.initialize();
        const response = await flow.post(newSessionRequest(1), { authorization: `Bearer ${OTHER_TOKEN}`, "acp-connection-id": connectionId });
        assertError(response, 404, ErrorCode.ResourceNotFound);
      });

      it("a known session not attached to this connection, used before session/load: 409", async () => {
        const first = await flow.session();
        const connectionId = await flow.initialize();
        const response = await flow.post(promptRequest(2, first.sessionId, "x"), { "acp-connection-id": connectionId, "acp-session-id": first.sessionId });
        assertError(response, 409, ErrorCode.InvalidRequest);
      });

      it("a second GET for a stream already open: 409 (connection and session streams)", async () => {
        const { connectionId, sessionId } = await flow.session();
        assertError((await flow.openSse(connectionId)) as RawResponse, 409, ErrorCode.InvalidRequest);
        const sessionStream = await flow.stream(connectionId, sessionId);
        assertError((await flow.openSse(connectionId, sessionId)) as RawResponse, 409, ErrorCode.InvalidRequest);
        // Once the first reader leaves, the stream can be opened again.
        sessionStream.close();
        await sessionStream.reader.ended;
        let reopened: OpenedSse | RawResponse | undefined;
        for (let attempt = 0; attempt < 50; attempt++) {
          reopened = await flow.openSse(connectionId, sessionId);
          if (isSse(reopened)) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(reopened !== undefined && isSse(reopened), "the stream reopens after its reader left");
      });

      it("missing or wrong token: 401 with WWW-Authenticate: Bearer", async () => {
        for (const authorization of [undefined, "Bearer wrong-token", `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}`]) {
          const response = await flow.client.request("POST", "/acp", {
            headers: { ...JSON_TYPE, ...(authorization !== undefined ? { authorization } : {}) },
            body: JSON.stringify(initializeRequest()),
          });
          assertError(response, 401, ErrorCode.AuthRequired);
          assert.match(String(response.headers["www-authenticate"]), /^Bearer realm="acp-remote"/);
        }
      });

      it("bad Origin: 403; a loopback Origin on a loopback server passes", async () => {
        assertError(await flow.post(initializeRequest(), { origin: "https://evil.example" }), 403, ErrorCode.InvalidRequest);
        assertError(await flow.post(initializeRequest(), { origin: "null" }), 403, ErrorCode.InvalidRequest);
        const own = await flow.post(initializeRequest(), { origin: "http://localhost:5173" });
        assert.equal(own.status, 200);
      });

      it("unsupported Acp-Protocol-Version: 400; a supported one passes", async () => {
        assertError(await flow.post(initializeRequest(), { "acp-protocol-version": "999" }), 400, ErrorCode.InvalidRequest);
        const ok = await flow.post(initializeRequest(), { "acp-protocol-version": String(PROTOCOL_VERSION) });
        assert.equal(ok.status, 200);
      });

      it("an oversize body: 413, and the server keeps serving", async () => {
        const connectionId = await flow.initialize();
        const huge = JSON.stringify({ ...newSessionRequest(1), params: { cwd: "x".repeat(256 * 1024), mcpServers: [] } });
        // The test server's limit is the default; send more than that.
        const body = huge.repeat(Math.ceil((4 * 1024 * 1024 + 1) / huge.length));
        const response = await flow.post(body, { "acp-connection-id": connectionId }).catch((error: unknown) => error);
        if (response instanceof Error) {
          // An HTTP/1.1 server may close the socket while the client is still sending.
          assert.match(String(response.message), /EPIPE|ECONNRESET|socket hang up/);
        } else {
          assertError(response as RawResponse, 413, ErrorCode.InvalidRequest);
        }
        const after = await flow.post(newSessionRequest(2), { "acp-connection-id": connectionId });
        assert.equal(after.status, 202, "the connection still works");
      });

      it("an unknown path: 404 with a JSON body; an unknown method on /acp: 405", async () => {
        assertError(await flow.client.request("GET", "/nothing-here", { headers: AUTH }), 404, ErrorCode.ResourceNotFound);
        const put = await flow.client.request("PUT", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: "{}" });
        assertError(put, 405, ErrorCode.InvalidRequest);
        assert.equal(put.headers["allow"], "GET, POST, DELETE");
      });

      it("?agent= names an unknown agent: 404", async () => {
        const response = await flow.client.request("POST", "/acp?agent=nope", { headers: { ...AUTH, ...JSON_TYPE }, body: JSON.stringify(initializeRequest()) });
        assertError(response, 404, ErrorCode.ResourceNotFound);
      });
    });

    describe("Validation order summary", () => {
      it("no Acp-Connection-Id before Content-Type: a non-initialize text/plain POST is 400, not 415", async () => {
        assertError(await flow.post(newSessionRequest(1), { "content-type": "text/plain" }), 400, ErrorCode.InvalidRequest);
      });

      it("unknown Acp-Connection-Id before Content-Type and batch: 404", async () => {
        const response = await flow.post([newSessionRequest(1)], { "acp-connection-id": "nope", "content-type": "text/plain" });
        assertError(response, 404, ErrorCode.ResourceNotFound);
      });

      it("missing Acp-Session-Id before Content-Type: a session-scoped text/plain POST is 400, not 415", async () => {
        const { connectionId, sessionId } = await flow.session();
        const response = await flow.post(promptRequest(2, sessionId, "x"), { "acp-connection-id": connectionId, "content-type": "text/plain" });
        assertError(response, 400, ErrorCode.InvalidRequest);
      });

      it("Content-Type before batch: a text/plain batch is 415, not 501", async () => {
        const connectionId = await flow.initialize();
        const response = await flow.post([newSessionRequest(1)], { "acp-connection-id": connectionId, "content-type": "text/plain" });
        assertError(response, 415, ErrorCode.InvalidRequest);
      });

      it("origin before auth before validation: a bad Origin without a token is 403; no token and no connection id is 401", async () => {
        const response = await flow.client.request("POST", "/acp", {
          headers: { ...JSON_TYPE, origin: "https://evil.example" },
          body: JSON.stringify(newSessionRequest(1)),
        });
        assertError(response, 403, ErrorCode.InvalidRequest);
        const unauthenticated = await flow.client.request("POST", "/acp", { headers: JSON_TYPE, body: JSON.stringify(newSessionRequest(1)) });
        assertError(unauthenticated, 401, ErrorCode.AuthRequired);
      });

      it("GET: Accept before Acp-Connection-Id: no Accept and no id is 406", async () => {
        const response = await flow.client.openSse("/acp", { ...AUTH, accept: "application/json" });
        assertError(response as RawResponse, 406, ErrorCode.InvalidRequest);
      });
    });
  });
}

describe("Host check (DNS rebinding) on a loopback server", () => {
  let server: StartedServer;
  let client: ProtocolClient;
  before(async () => {
    server = await startTransportServer();
    client = createClient("http1", server.url);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it("a Host that is not a loopback name: 403", async () => {
    const response = await client.request("POST", "/acp", {
      headers: { ...AUTH, ...JSON_TYPE, host: `rebound.example:${server.port}` },
      body: JSON.stringify(initializeRequest()),
    });
    assertError(response, 403, ErrorCode.InvalidRequest);
  });

  it("Host localhost passes", async () => {
    const response = await client.request("POST", "/acp", {
      headers: { ...AUTH, ...JSON_TYPE, host: `localhost:${server.port}` },
      body: JSON.stringify(initializeRequest()),
    });
    assert.equal(response.status, 200);
  });
});
