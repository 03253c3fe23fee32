// A `session/update` the relay passes on unchanged goes out in the agent's own
// text (no second serialization), and one whose session the relay names by an
// id of its own goes out re-serialized with that id. Real sidecar, an agent
// that writes its lines in a form of its own (fixtures/spaced-agent.ts), raw
// SSE event text over h2c and HTTP/1.1, raw frames over WebSocket.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { PassThrough } from "node:stream";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { NdjsonMessageReader, lineReadFor } from "../../common/ndjson.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { type RunningServer, serve } from "../../sidecar/server/serve.ts";
import { createClient, type ProtocolClient } from "../helpers/http-clients.ts";
import { SPACED_AGENT_SESSION_ID, spacedUpdateLine } from "./fixtures/spaced-agent.ts";

const TOKEN = "relayed-text-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
const SPACED_AGENT = fileURLToPath(new URL("./fixtures/spaced-agent.ts", import.meta.url));
const INITIALIZE = { jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };

/** The `data:` text of each SSE event of a GET, as it came, waited for one at a time. */
class RawEvents {
  readonly #events: string[] = [];
  readonly #waiters: Array<(data: string) => void> = [];
  #buffer = "";
  close: () => void = () => {};

  push(chunk: string): void {
    this.#buffer += chunk;
    for (let end = this.#buffer.indexOf("\n\n"); end !== -1; end = this.#buffer.indexOf("\n\n")) {
      const event = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
      if (data.length === 0) continue;
      const waiter = this.#waiters.shift();
      if (waiter !== undefined) waiter(data.join("\n"));
      else this.#events.push(data.join("\n"));
    }
  }

  next(timeoutMs = 10_000): Promise<string> {
    const queued = this.#events.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push((data) => {
        clearTimeout(timer);
        resolve(data);
      });
    });
  }
}

function openEvents(protocol: "h2c" | "http1", url: string, headers: Record<string, string>): Promise<RawEvents> {
  const events = new RawEvents();
  const all = { ...AUTH, ...headers, accept: "text/event-stream" };
  return new Promise((resolve, reject) => {
    if (protocol === "http1") {
      const req = http.request(`${url}/acp`, { headers: all, agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET answered ${res.statusCode}`));
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => events.push(chunk));
        res.on("error", () => {});
        events.close = () => req.destroy();
        resolve(events);
      });
      req.on("error", reject);
      req.end();
      return;
    }
    const session = http2.connect(url);
    session.on("error", () => {});
    const stream = session.request({ ":method": "GET", ":path": "/acp", ...all }, { endStream: true });
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => events.push(chunk));
    stream.on("error", reject);
    stream.once("response", (h) => {
      if (h[":status"] !== 200) return reject(new Error(`GET answered ${h[":status"]}`));
      events.close = () => session.destroy();
      resolve(events);
    });
  });
}

/**
 * The next message that is not the hub's own title notice: a session's first
 * prompt gives it a title, told as a session_info_update before the agent's
 * first update.
 */
async function agentsOwn(next: () => Promise<string>): Promise<string> {
  for (;;) {
    const frame = await next();
    const update = (JSON.parse(frame) as { params?: { update?: { sessionUpdate?: string } } }).params?.update?.sessionUpdate;
    if (update !== "session_info_update") return frame;
  }
}

describe("relayed update text", () => {
  let server: RunningServer;
  let dataDir: string;
  const closers: Array<() => unknown> = [];
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-relayed-text-"));
    server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [{ name: "spaced", command: process.execPath, args: [SPACED_AGENT] }],
      tokens: [TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: () => {},
    });
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const protocol of ["h2c", "http1"] as const) {
    it(`${protocol}: an update of a session the agent names by its public id leaves in the agent's own text; another session's, re-serialized with its public id`, async () => {
      const client: ProtocolClient = createClient(protocol, server.url);
      closers.push(() => client.close());
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, ...JSON_TYPE }, body: JSON.stringify(INITIALIZE) });
      const connectionId = String(init.headers["acp-connection-id"]);
      const connectionStream = await openEvents(protocol, server.url, { "acp-connection-id": connectionId });
      closers.push(() => connectionStream.close());
      const newSession = async (id: number): Promise<string> => {
        const posted = await client.request("POST", "/acp", {
          headers: { ...AUTH, ...JSON_TYPE, "acp-connection-id": connectionId },
          body: JSON.stringify({ jsonrpc: "2.0", id, method: Acp.agent.session.new, params: { cwd: tmpdir(), mcpServers: [] } }),
        });
        assert.equal(posted.status, 202);
        return (JSON.parse(await connectionStream.next()) as { result: { sessionId: string } }).result.sessionId;
      };
      const say = async (sessionId: string, id: number, text: string): Promise<string> => {
        const stream = await openEvents(protocol, server.url, { "acp-connection-id": connectionId, "acp-session-id": sessionId });
        closers.push(() => stream.close());
        const posted = await client.request("POST", "/acp", {
          headers: { ...AUTH, ...JSON_TYPE, "acp-connection-id": connectionId, "acp-session-id": sessionId },
          body: JSON.stringify({ jsonrpc: "2.0", id, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text: `say ${text}` }] } }),
        });
        assert.equal(posted.status, 202);
        const update = await agentsOwn(() => stream.next());
        assert.equal((JSON.parse(await stream.next()) as { id: number }).id, id, "then the response");
        return update;
      };

      const first = await newSession(1);
      assert.equal(first, SPACED_AGENT_SESSION_ID, "the agent's id is the public id");
      assert.equal(await say(first, 2, "as written"), spacedUpdateLine(first, "as written"));

      const second = await newSession(3);
      assert.notEqual(second, SPACED_AGENT_SESSION_ID, "the agent's id is taken: the relay names the session itself");
      const relayed = await say(second, 4, "renamed");
      assert.notEqual(relayed, spacedUpdateLine(SPACED_AGENT_SESSION_ID, "renamed"));
      assert.deepEqual(JSON.parse(relayed), JSON.parse(spacedUpdateLine(second, "renamed")));
    });
  }

  it("WebSocket: the update frame is the agent's own text", async () => {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/acp`, { headers: AUTH });
    closers.push(() => ws.terminate());
    const frames: string[] = [];
    const waiters: Array<(frame: string) => void> = [];
    ws.on("message", (data) => {
      const frame = String(data);
      const waiter = waiters.shift();
      if (waiter !== undefined) waiter(frame);
      else frames.push(frame);
    });
    const next = (): Promise<string> => {
      const queued = frames.shift();
      return queued !== undefined ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
    };
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(JSON.stringify(INITIALIZE));
    await next();
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: tmpdir(), mcpServers: [] } }));
    const sessionId = (JSON.parse(await next()) as { result: { sessionId: string } }).result.sessionId;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: Acp.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text: "say over a socket" }] } }));
    assert.equal(await agentsOwn(next), spacedUpdateLine(sessionId, "over a socket"));
    assert.equal((JSON.parse(await next()) as { id: number }).id, 2);
  });
});

describe("lineReadFor: when a relayed message may go out as the line it was read from", () => {
  /** The messages a reader keeping `session/update` lines parses from `lines`. */
  async function read(lines: string[]): Promise<Array<Record<string, unknown>>> {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input, { keepLines: new Set([Acp.client.session.update]) });
    const messages: Array<Record<string, unknown>> = [];
    reader.listen((message) => messages.push(message as unknown as Record<string, unknown>));
    input.write(lines.map((l) => `${l}\n`).join(""));
    await new Promise((resolve) => setImmediate(resolve));
    return messages;
  }
  const line = spacedUpdateLine("s1", "hi");

  it("the message as parsed, or rebuilt around the same params, is its line", async () => {
    const [message] = await read([line]);
    assert.ok(message);
    assert.equal(lineReadFor(message), line);
    assert.equal(lineReadFor({ jsonrpc: "2.0", method: Acp.client.session.update, params: message["params"] }), line);
  });

  it("a shallow copy of the params with the very same members is the line; one naming another session, adding or replacing a member, is not", async () => {
    const [message] = await read([line]);
    const params = message?.["params"] as Record<string, unknown>;
    const wrap = (p: unknown) => ({ jsonrpc: "2.0", method: Acp.client.session.update, params: p });
    assert.equal(lineReadFor(wrap({ ...params })), line);
    assert.equal(lineReadFor(wrap({ ...params, sessionId: "s1" })), line);
    assert.equal(lineReadFor(wrap({ ...params, sessionId: "public" })), undefined);
    assert.equal(lineReadFor(wrap({ ...params, _meta: {} })), undefined);
    assert.equal(lineReadFor(wrap({ ...params, update: { ...(params["update"] as object) } })), undefined);
  });

  it("another method, an id, or another key beside jsonrpc, method and params: no line", async () => {
    const [message] = await read([line]);
    const params = message?.["params"];
    assert.equal(lineReadFor({ jsonrpc: "2.0", method: "other/method", params }), undefined);
    assert.equal(lineReadFor({ jsonrpc: "2.0", id: 1, method: Acp.client.session.update, params }), undefined);
    assert.equal(lineReadFor({ jsonrpc: "2.0", method: Acp.client.session.update, params, extra: true }), undefined);
  });

  it("a line with a key of its own beside jsonrpc, method and params, of a method not kept, or with a carriage return between its tokens (which would end an SSE line), is not kept", async () => {
    const withExtra = `${line.slice(0, -1)}, "extra" : 1 }`;
    const other = line.replace(Acp.client.session.update, "other/notification");
    const withReturn = line.replace(' "method" :', '\r"method" :');
    const [extra, notKept, returned] = await read([withExtra, other, withReturn]);
    assert.ok(extra && notKept && returned);
    assert.equal(lineReadFor({ jsonrpc: "2.0", method: Acp.client.session.update, params: extra["params"] }), undefined);
    assert.equal(lineReadFor(notKept), undefined);
    assert.equal(returned["method"], Acp.client.session.update, "the line itself is read");
    assert.equal(lineReadFor(returned), undefined);
  });
});
