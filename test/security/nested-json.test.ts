// Values nested deep, at every door a message comes in by: /acp POST bodies
// (h2c and HTTP/1.1), /acp WebSocket messages, /v1 bodies (plain and
// deferred), the control protocol on stdio, and agents' lines. A message
// nested deeper than DEFAULT_MAX_JSON_DEPTH is refused with its protocol's own
// error (-32600 on /acp and the control protocol, 400 invalid_request_error on
// /v1; an agent's line is dropped, its request answered -32600, its answer
// fails the request it answers); one within the bound goes through. The server
// is a real `acp-remote serve` process with real agents, so that "the server
// stays up" is its process still running, and answering, after each door.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { StreamMessageReader } from "vscode-jsonrpc/node";
import type { Message } from "vscode-jsonrpc";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ControlNotification, ControlRequest } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { DEFAULT_MAX_JSON_DEPTH } from "../../sidecar/limits.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { createClient, isSse, jsonOf, type OpenedSse, type ProtocolClient, type RawResponse } from "../helpers/http-clients.ts";
import { FIXTURE_AGENT, spawnServe, type ServeChild } from "../helpers/serve-child.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const TOKEN = "nested-json-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const RAW_AGENT = new URL("./fixtures/raw-agent.ts", import.meta.url).pathname;
/** The depths every door is tried with: an array this deep sits a few levels into each message. */
const DEPTHS = [10, 100, 1_000, 10_000, 100_000];
/** Wait for any one answer, generous for a loaded machine; a crash or a lost answer fails long before. */
const ANSWER_MS = 30_000;

/** The JSON text of an array `depth` deep. */
const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
/** Whether a message whose deep array sits `above` levels into it is over the bound. */
const overBound = (depth: number, above: number): boolean => depth + above > DEFAULT_MAX_JSON_DEPTH;

/**
 * A session/prompt with the text `text` whose text block carries `x`, an
 * array `depth` deep (message, params, prompt, block: four levels above it).
 */
const PROMPT_LEVELS = 4;
function promptText(id: string | number, sessionId: string, text: string, depth?: number): string {
  const x = depth === undefined ? "" : `,"x":${deep(depth)}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"${Acp.agent.session.prompt}","params":{"sessionId":${JSON.stringify(sessionId)},"prompt":[{"type":"text","text":${JSON.stringify(text)}${x}}]}}`;
}
const initialize = (id: number): unknown => ({ jsonrpc: "2.0", id, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
const newSession = (id: number): unknown => ({ jsonrpc: "2.0", id, method: Acp.agent.session.new, params: { cwd: tmpdir(), mcpServers: [] } });

/** The text of the message chunk a session/update carries, if it is one. */
function chunkText(m: Record<string, unknown>): string | undefined {
  const update = (m["params"] as { update?: { sessionUpdate?: string; content?: { text?: string } } } | undefined)?.update;
  return update?.sessionUpdate === "agent_message_chunk" ? update.content?.text : undefined;
}

/** The body is a JSON-RPC error with id null and code -32600, answered 400. */
function assertRefused(response: RawResponse): void {
  assert.equal(response.status, 400, response.body);
  const body = jsonOf(response) as { id: unknown; error: { code: number; message: string } };
  assert.equal(body.id, null);
  assert.equal(body.error.code, ErrorCode.InvalidRequest);
  assert.match(body.error.message, new RegExp(`deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
}

/** The server's process runs and wrote no stack overflow. */
function assertUp(server: ServeChild): void {
  assert.equal(server.child.exitCode, null, `the server exited:\n${server.stderr()}`);
  assert.equal(server.child.signalCode, null, `the server was killed:\n${server.stderr()}`);
  assert.doesNotMatch(server.stderr(), /Maximum call stack size exceeded|RangeError/);
}

/** Messages of a WebSocket up to and including the one `done` accepts; requests named in `answer` are answered on the way. */
async function wsUntil(ws: WsTestClient, done: (m: Record<string, unknown>) => boolean, answer: ReadonlySet<string> = new Set()): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  for (;;) {
    const m = await ws.next(ANSWER_MS);
    seen.push(m);
    if (typeof m["method"] === "string" && answer.has(m["method"]) && m["id"] !== undefined) ws.send({ jsonrpc: "2.0", id: m["id"], result: {} });
    if (done(m)) return seen;
  }
}

/** A WebSocket connection with one session of `agent`. */
async function wsSession(server: ServeChild, agent: string): Promise<{ ws: WsTestClient; sessionId: string }> {
  const opened = await WsTestClient.open(`${server.url}/acp?agent=${agent}`, { headers: AUTH });
  assert.ok(!isRefusal(opened), `refused: ${isRefusal(opened) ? opened.body : ""}`);
  opened.send(initialize(0));
  await wsUntil(opened, (m) => m["id"] === 0);
  opened.send(newSession(1));
  const created = (await wsUntil(opened, (m) => m["id"] === 1)).at(-1) as { result: { sessionId: string } };
  return { ws: opened, sessionId: created.result.sessionId };
}

/** The answer of a prompt over a WebSocket whose text is `echo <word>`, with the word echoed back. */
async function wsEcho(ws: WsTestClient, sessionId: string, id: string, word: string, depth?: number): Promise<Record<string, unknown>[]> {
  ws.send(promptText(id, sessionId, `echo ${word}`, depth));
  return wsUntil(ws, (m) => m["id"] === id || (m["id"] === null && m["error"] !== undefined));
}

/** One client of an HTTP version with one session of the fixture agent and its session stream open. */
class HttpSession {
  readonly client: ProtocolClient;
  connectionId = "";
  sessionId = "";
  #streams: OpenedSse[] = [];
  #sessionStream: OpenedSse | undefined;

  constructor(client: ProtocolClient) {
    this.client = client;
  }

  post(body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
    return this.client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json", ...headers }, body });
  }

  async open(): Promise<void> {
    const init = await this.post(JSON.stringify(initialize(0)));
    assert.equal(init.status, 200, init.body);
    this.connectionId = String(init.headers["acp-connection-id"]);
    const connectionStream = await this.#stream();
    const posted = await this.post(JSON.stringify(newSession(1)), { "acp-connection-id": this.connectionId });
    assert.equal(posted.status, 202, posted.body);
    const created = (await connectionStream.reader.until((m) => m["id"] === 1, ANSWER_MS)).at(-1) as { result: { sessionId: string } };
    this.sessionId = created.result.sessionId;
    this.#sessionStream = await this.#stream(this.sessionId);
  }

  async #stream(sessionId?: string): Promise<OpenedSse> {
    const opened = await this.client.openSse("/acp", {
      ...AUTH,
      accept: "text/event-stream",
      "acp-connection-id": this.connectionId,
      ...(sessionId !== undefined ? { "acp-session-id": sessionId } : {}),
    });
    assert.ok(isSse(opened), `GET answered ${(opened as RawResponse).status}`);
    this.#streams.push(opened);
    return opened;
  }

  /** POSTs a prompt `echo <word>`, its text block carrying an array `depth` deep. */
  prompt(id: string, word: string, depth?: number): Promise<RawResponse> {
    return this.post(promptText(id, this.sessionId, `echo ${word}`, depth), { "acp-connection-id": this.connectionId, "acp-session-id": this.sessionId });
  }

  /** The session stream's messages up to the prompt's answer. */
  answer(id: string): Promise<Record<string, unknown>[]> {
    return (this.#sessionStream as OpenedSse).reader.until((m) => m["id"] === id, ANSWER_MS);
  }

  async close(): Promise<void> {
    for (const stream of this.#streams) stream.close();
    await this.client.close();
  }
}

/** POST /v1/chat/completions with a raw body. */
function v1Post(server: ServeChild, body: string): Promise<Response> {
  return fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body });
}
/** A chat completion body (`echo <word>` to the fixture agent) with `x_extra`, an array `depth` deep (one level below the body). */
function chatBody(word: string, options: { deferred?: boolean; depth?: number } = {}): string {
  const extra = options.depth === undefined ? "" : `,"x_extra":${deep(options.depth)}`;
  return `{"model":"fixture","messages":[{"role":"user","content":"echo ${word}"}]${options.deferred === true ? ',"deferred":true' : ""}${extra}}`;
}
const V1_LEVELS = 1;

/** A 400 `invalid_request_error` that says why. */
async function assertV1Refused(response: Response): Promise<void> {
  const body = (await response.json()) as { error: { type: string; message: string } };
  assert.equal(response.status, 400, JSON.stringify(body));
  assert.equal(body.error.type, "invalid_request_error");
  assert.match(body.error.message, new RegExp(`deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
}

/** The content of a plain chat completion, after asserting it is one. */
async function completionText(response: Response): Promise<string> {
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.choices?.[0]?.message.content ?? "";
}

/** Polls a deferred completion until it is no longer 202. */
async function deferredResult(server: ServeChild, id: string): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + ANSWER_MS;
  for (;;) {
    const response = await fetch(`${server.url}/v1/chat/deferred-completion/${id}`, { headers: AUTH });
    const body: unknown = response.status === 202 ? await response.arrayBuffer() : await response.json();
    if (response.status !== 202) return { status: response.status, body };
    assert.ok(Date.now() < deadline, `deferred completion ${id} still pending after ${ANSWER_MS} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("nested JSON: regressions", () => {
  let server: ServeChild;
  before(async () => {
    server = await spawnServe({ token: TOKEN });
  });
  after(async () => {
    await server.close();
  });

  it("a session/prompt whose text block carries a 5,000-deep array (10 KB) is refused 400 / -32600, and the server stays up", async () => {
    const session = new HttpSession(createClient("h2c", server.url));
    try {
      await session.open();
      const body = promptText("deep", session.sessionId, "echo deep", 5_000);
      assert.ok(body.length > 10_000 && body.length < 11_000, "about 10 KB");
      assertRefused(await session.post(body, { "acp-connection-id": session.connectionId, "acp-session-id": session.sessionId }));
      // Past the journal's flush (50 ms), where a value this deep fails to serialize: the next prompt is answered.
      const posted = await session.prompt("after", "still-here");
      assert.equal(posted.status, 202, posted.body);
      const messages = await session.answer("after");
      assert.ok(messages.map(chunkText).includes("still-here"));
      assertUp(server);
    } finally {
      await session.close();
    }
  });

  it("a /v1 deferred POST with a 5,000-deep extra field is 400 invalid_request_error, not 500", async () => {
    await assertV1Refused(await v1Post(server, chatBody("deep", { deferred: true, depth: 5_000 })));
    // The same body without `deferred` is refused alike.
    await assertV1Refused(await v1Post(server, chatBody("deep", { depth: 5_000 })));
    assertUp(server);
  });
});

describe("nested JSON: depths 10 to 100,000 at every door of `serve`", () => {
  let server: ServeChild;
  before(async () => {
    server = await spawnServe({ token: TOKEN, moreAgents: [`deep=${NODE} ${RAW_AGENT}`] });
  });
  after(async () => {
    await server.close();
  });

  for (const protocol of ["h2c", "http1"] as const) {
    it(`/acp POST over ${protocol}: a prompt within the bound is answered, a deeper one is 400 / -32600; a normal prompt follows`, async () => {
      const session = new HttpSession(createClient(protocol, server.url));
      try {
        await session.open();
        for (const depth of DEPTHS) {
          const posted = await session.prompt(`deep-${depth}`, `deep-${depth}`, depth);
          if (overBound(depth, PROMPT_LEVELS)) {
            assertRefused(posted);
          } else {
            assert.equal(posted.status, 202, `depth ${depth}: ${posted.body}`);
            assert.ok((await session.answer(`deep-${depth}`)).map(chunkText).includes(`deep-${depth}`), `depth ${depth} echoed`);
          }
        }
        const posted = await session.prompt("after", "after");
        assert.equal(posted.status, 202, posted.body);
        assert.ok((await session.answer("after")).map(chunkText).includes("after"));
        assertUp(server);
      } finally {
        await session.close();
      }
    });
  }

  it("/acp WebSocket: a message within the bound is answered, a deeper one is answered -32600 (id null); a normal prompt follows", async () => {
    const { ws, sessionId } = await wsSession(server, "fixture");
    try {
      for (const depth of DEPTHS) {
        const answer = (await wsEcho(ws, sessionId, `deep-${depth}`, `deep-${depth}`, depth)).at(-1) as { id: unknown; error?: { code: number }; result?: unknown };
        if (overBound(depth, PROMPT_LEVELS)) {
          assert.deepEqual([answer.id, answer.error?.code], [null, ErrorCode.InvalidRequest], `depth ${depth}`);
        } else {
          assert.equal(answer.id, `deep-${depth}`);
          assert.ok(answer.result !== undefined, `depth ${depth}: ${JSON.stringify(answer)}`);
        }
      }
      assert.ok((await wsEcho(ws, sessionId, "after", "after")).map(chunkText).includes("after"));
      assertUp(server);
    } finally {
      await ws.close();
    }
  });

  it("/v1 plain: a body within the bound is completed, a deeper one is 400 invalid_request_error; a normal request follows", async () => {
    for (const depth of DEPTHS) {
      const response = await v1Post(server, chatBody(`v1-${depth}`, { depth }));
      if (overBound(depth, V1_LEVELS)) await assertV1Refused(response);
      else assert.equal(await completionText(response), `v1-${depth}`);
    }
    assert.equal(await completionText(await v1Post(server, chatBody("after"))), "after");
    assertUp(server);
  });

  it("/v1 deferred: a body within the bound is taken and completed, a deeper one is 400 invalid_request_error; a normal request follows", async () => {
    const submit = async (word: string, depth?: number): Promise<Response> => v1Post(server, chatBody(word, { deferred: true, ...(depth === undefined ? {} : { depth }) }));
    const completed = async (response: Response): Promise<string> => {
      const submitted = (await response.json()) as { request_id: string };
      assert.equal(response.status, 200, JSON.stringify(submitted));
      const result = await deferredResult(server, submitted.request_id);
      assert.equal(result.status, 200, JSON.stringify(result.body));
      return (result.body as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? "";
    };
    for (const depth of DEPTHS) {
      const response = await submit(`deferred-${depth}`, depth);
      if (overBound(depth, V1_LEVELS)) await assertV1Refused(response);
      else assert.equal(await completed(response), `deferred-${depth}`);
    }
    assert.equal(await completed(await submit("after")), "after");
    assertUp(server);
  });

  // The raw agent (fixtures/raw-agent.ts) writes its arrays four levels into each message.
  const AGENT_LEVELS = 4;

  it("an agent's session/update within the bound is relayed; a deeper one is dropped, and the turn goes on", async () => {
    const { ws, sessionId } = await wsSession(server, "deep");
    try {
      for (const depth of DEPTHS) {
        ws.send(promptText(`update-${depth}`, sessionId, `update ${depth}`));
        const seen = await wsUntil(ws, (m) => m["id"] === `update-${depth}`);
        const chunks = seen.map(chunkText);
        assert.equal(chunks.includes(`update ${depth}`), !overBound(depth, AGENT_LEVELS), `depth ${depth}: ${chunks.join(", ")}`);
        assert.ok(chunks.includes(`after ${depth}`), `the turn went on after depth ${depth}`);
        assert.deepEqual((seen.at(-1) as { result?: unknown }).result, { stopReason: "end_turn" });
      }
      assertUp(server);
    } finally {
      await ws.close();
    }
  });

  it("an agent's request within the bound reaches the client; a deeper one is answered -32600 to the agent", async () => {
    const { ws, sessionId } = await wsSession(server, "deep");
    try {
      for (const depth of DEPTHS) {
        ws.send(promptText(`request-${depth}`, sessionId, `request ${depth}`));
        const seen = await wsUntil(ws, (m) => m["id"] === `request-${depth}`, new Set(["_deep/probe"]));
        const relayed = seen.some((m) => m["method"] === "_deep/probe");
        assert.equal(relayed, !overBound(depth, AGENT_LEVELS), `depth ${depth}`);
        const told = overBound(depth, AGENT_LEVELS) ? String(ErrorCode.InvalidRequest) : "result";
        assert.ok(seen.map(chunkText).includes(`answer ${depth}: ${told}`), `depth ${depth}: ${seen.map(chunkText).join(", ")}`);
      }
      assertUp(server);
    } finally {
      await ws.close();
    }
  });

  it("an agent's answer within the bound is relayed; a deeper one fails the request it answers with -32600", async () => {
    const { ws, sessionId } = await wsSession(server, "deep");
    try {
      for (const depth of DEPTHS) {
        ws.send(promptText(`answer-${depth}`, sessionId, `answer ${depth}`));
        const answer = (await wsUntil(ws, (m) => m["id"] === `answer-${depth}`)).at(-1) as { result?: { stopReason: string }; error?: { code: number } };
        if (overBound(depth, AGENT_LEVELS)) assert.equal(answer.error?.code, ErrorCode.InvalidRequest, `depth ${depth}: ${JSON.stringify(answer)}`);
        else assert.equal(answer.result?.stopReason, "end_turn", `depth ${depth}`);
      }
      // The same agent and session still work.
      ws.send(promptText("after", sessionId, "update 1"));
      assert.ok((await wsUntil(ws, (m) => m["id"] === "after")).map(chunkText).includes("update 1"));
      assertUp(server);
    } finally {
      await ws.close();
    }
  });
});

/** `acp-remote serve --control stdio` as an editor runs it; the test writes raw frames so that it can send values no serializer would. */
interface ControlChild {
  child: ChildProcessWithoutNullStreams;
  /** Writes one message as a Content-Length frame. */
  send(json: string): void;
  /** The next message that `accept` takes (others are skipped). */
  next(accept: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  stderr(): string;
  close(): Promise<void>;
}

async function startControl(): Promise<ControlChild> {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-nested-control-"));
  const child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", dataDir], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  new StreamMessageReader(child.stdout).listen((m: Message) => {
    messages.push(m as unknown as Record<string, unknown>);
    for (const w of [...waiters]) w();
  });
  const control: ControlChild = {
    child,
    send(json) {
      child.stdin.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    },
    next(accept) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const at = messages.findIndex(accept);
          if (at === -1) return;
          const [found] = messages.splice(at, 1);
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found as Record<string, unknown>);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such control message within ${ANSWER_MS} ms; stderr:\n${err}`));
        }, ANSWER_MS);
        waiters.add(check);
        check();
      });
    },
    stderr: () => err,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        control.send(JSON.stringify({ jsonrpc: "2.0", id: "shutdown", method: Lsp.shutdown.method }));
        await control.next((m) => m["id"] === "shutdown").catch(() => undefined);
        control.send(JSON.stringify({ jsonrpc: "2.0", method: Lsp.exit.method }));
        const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  control.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "init",
      method: Lsp.initialize.method,
      params: {
        processId: process.pid,
        initializationOptions: { host: { fs: false, terminal: false }, permissionPolicy: "both", serve: { host: "127.0.0.1", port: 0, agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }] } },
      },
    }),
  );
  await control.next((m) => m["id"] === "init");
  const started = await control.next((m) => m["method"] === ControlNotification.serverStarted.method || m["method"] === ControlNotification.serverFailed.method);
  assert.equal(started["method"], ControlNotification.serverStarted.method, JSON.stringify(started));
  return control;
}

describe("nested JSON: depths 10 to 100,000 on the control protocol", () => {
  let control: ControlChild;
  before(async () => {
    control = await startControl();
  });
  after(async () => {
    await control.close();
  });

  it("a request within the bound is answered, a deeper one is answered -32600 with its id; a deeper notification is dropped; a normal request follows", async () => {
    // The message, params and `x`: the array sits two levels in.
    const levels = 2;
    for (const depth of DEPTHS) {
      const id = `status-${depth}`;
      control.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"${ControlRequest.status.method}","params":{"x":${deep(depth)}}}`);
      const answer = (await control.next((m) => m["id"] === id)) as { result?: { server: unknown }; error?: { code: number } };
      if (overBound(depth, levels)) assert.equal(answer.error?.code, ErrorCode.InvalidRequest, `depth ${depth}: ${JSON.stringify(answer)}`);
      else assert.ok(answer.result?.server !== undefined, `depth ${depth}: ${JSON.stringify(answer)}`);
      control.send(`{"jsonrpc":"2.0","method":"${Lsp.initialized.method}","params":{"x":${deep(depth)}}}`);
    }
    control.send(JSON.stringify({ jsonrpc: "2.0", id: "after", method: ControlRequest.status.method }));
    const after = (await control.next((m) => m["id"] === "after")) as { result?: { server: unknown } };
    assert.ok(after.result?.server !== undefined, JSON.stringify(after));
    assert.equal(control.child.exitCode, null, control.stderr());
    assert.match(control.stderr(), new RegExp(`refused a "${Lsp.initialized.method}" message: .*deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
    assert.doesNotMatch(control.stderr(), /Maximum call stack size exceeded|RangeError/);
  });
});
