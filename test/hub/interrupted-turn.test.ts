// A turn cut off under its clients ends visibly (sidecar/hub/interrupted-turns.ts):
// when its agent process dies, and when the server itself is killed. The real
// sidecar (in this process, or `acp-remote serve` as a child killed with
// SIGKILL together with its agents), the fixture agent, and the official ACP
// SDK client over HTTP/2 as the independent client that must see the ending:
// the prompt's answer, the tool call failed as interrupted, the permission
// request withdrawn, and a replay (session/load) that shows the same.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { ClientConnection, PermissionOption, RequestPermissionRequest, SessionNotification, SessionUpdate, ToolCallStatus } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { fetch as undiciFetch, H2CClient } from "undici";
import { AcpExt } from "../../protocol/acp.ts";
import { endsTurn, type HistoryMark, markUpdate, readMark, toolCallInterruption } from "../../protocol/history.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { compactHistory } from "../../sidecar/hub/compaction.ts";
import { closeInterruptedTurn } from "../../sidecar/hub/interrupted-turns.ts";
import { Journal } from "../../sidecar/hub/journal.ts";
import { type RunningServer, serve } from "../../sidecar/server/serve.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { freePort, ManagedProcess, removeOnExit } from "../helpers/managed-process.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";
import { drawHistory, type ToolCard } from "../helpers/view-model.ts";

const TOKEN = "interrupted-turn-token-0123456789";
const WAIT_MS = 30_000;
const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/** A permission request the client was asked, and whether it was withdrawn ($/cancel_request) before anyone answered. */
interface Asked {
  params: RequestPermissionRequest;
  withdrawn: Promise<void>;
}

/**
 * The SDK's client over h2c, as a person's client that does not answer
 * permission requests: each waits until the server withdraws it.
 */
class PersonClient {
  readonly connection: ClientConnection;
  readonly updates: SessionNotification[] = [];
  readonly asked: Asked[] = [];
  readonly #dispatcher: H2CClient;
  readonly #wakers = new Set<() => void>();

  constructor(baseUrl: string) {
    this.#dispatcher = new H2CClient(baseUrl, { pipelining: 100 });
    const through = this.#dispatcher;
    const fetch = ((input: string | URL | Request, init?: RequestInit) =>
      undiciFetch(input as string, { ...(init as object), dispatcher: through } as Parameters<typeof undiciFetch>[1])) as unknown as typeof globalThis.fetch;
    const app = client({ name: "interrupted-turn-test" })
      .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
        this.updates.push(params);
        this.#wake();
      })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => {
        const withdrawn = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        this.asked.push({ params, withdrawn });
        this.#wake();
        return withdrawn.then(() => ({ outcome: { outcome: "cancelled" as const } }));
      });
    this.connection = app.connect(createHttpStream(`${baseUrl}/acp`, { headers: { authorization: `Bearer ${TOKEN}` }, fetch }));
  }

  async initialize(): Promise<void> {
    await this.connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
  }

  prompt(sessionId: string, script: string): Promise<{ stopReason: string }> {
    return this.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: script }] });
  }

  /** Waits until `found` returns something, as updates and requests come. */
  async until<T>(found: () => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const value = found();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(this.updates.map((n) => n.update)).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wakers.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The updates of one session, in order. */
  of(sessionId: string): SessionUpdate[] {
    return this.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  async close(): Promise<void> {
    this.connection.close();
    await this.connection.closed.catch(() => undefined);
    await this.#dispatcher.destroy().catch(() => undefined);
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
    this.#wakers.clear();
  }
}

/** The JSON-RPC error a request was answered with. */
async function rejection(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error("the request was answered without an error");
}

/** The state session/list gives the session (`_meta.acpRemote.state`). */
async function listedState(c: PersonClient, sessionId: string): Promise<string | undefined> {
  const listed = await c.connection.agent.request(methods.agent.session.list, {});
  const session = listed.sessions.find((s) => s.sessionId === sessionId) as { _meta?: { acpRemote?: { state?: string } } } | undefined;
  return session?._meta?.acpRemote?.state;
}

function marksOf(history: readonly SessionUpdate[]): HistoryMark[] {
  return history.map(readMark).filter((mark) => mark !== undefined);
}

/** The tool cards the session view draws of `history` (test/helpers/view-model.ts follows the view's rules). */
function toolCards(history: readonly SessionUpdate[]): ToolCard[] {
  return drawHistory(history).blocks.filter((block): block is ToolCard => block.block === "tool");
}

/**
 * A replay of the session on a new connection (session/load), as a reloaded
 * page or a reconnecting client gets it, up to the end of its last turn (the
 * replay comes on the session's stream, the answer on the connection's: they
 * may come in either order).
 */
async function replay(baseUrl: string, sessionId: string, cwd: string): Promise<SessionUpdate[]> {
  const reader = new PersonClient(baseUrl);
  try {
    await reader.initialize();
    await reader.connection.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    await reader.until(() => {
      const last = reader.of(sessionId).at(-1);
      return last !== undefined && endsTurn(last) ? true : undefined;
    }, "the replay's last turn end");
    return reader.of(sessionId);
  } finally {
    await reader.close();
  }
}

describe("a turn whose agent process dies under it", () => {
  let dataDir: string;
  let server: RunningServer;
  const clients: PersonClient[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-remote-interrupted-"));
    server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }],
      tokens: [TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: () => undefined,
    });
  });

  after(async () => {
    for (const c of clients) await c.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function person(): Promise<PersonClient> {
    const c = new PersonClient(server.url);
    clients.push(c);
    await c.initialize();
    return c;
  }

  test("regression: an agent killed while its turn waited on a permission left the tool card pending for ever and the turn without an end; now every client gets the end, the tool call failed as interrupted, the request withdrawn, and a replay shows the same", async () => {
    const editor = await person();
    const sessionId = await editor.newSession(dataDir);
    // The phone follows the same session beside it.
    const phone = await person();
    await phone.connection.agent.request(AcpExt.sessionAttach, { sessionId, historyPolicy: "none" });

    const turn = editor.prompt(sessionId, "permission Edit README");
    await editor.until(() => editor.asked[0], "the permission request on the editor");
    await phone.until(() => phone.asked[0], "the permission request on the phone");
    const pid = server.hub.status().agents[0]?.pid;
    assert.ok(pid !== undefined, "the agent runs");
    process.kill(pid, "SIGKILL");

    const error = await rejection(turn);
    assert.equal(error.code, ErrorCode.InternalError);
    assert.equal(error.message, "Turn interrupted: the agent exited (agent fixture was killed by SIGKILL)");
    // Withdrawn from both, as when it is answered elsewhere.
    await editor.asked[0]!.withdrawn;
    await phone.asked[0]!.withdrawn;

    // Live: the tool call fails as interrupted, on every client that follows.
    const toolCallId = editor.asked[0]!.params.toolCall.toolCallId;
    for (const follower of [editor, phone]) {
      const failed = await follower.until(
        () => follower.of(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === toolCallId && u.status === "failed"),
        "the tool call's end",
      );
      assert.equal(toolCallInterruption(failed as { _meta?: Record<string, unknown> }), "agent-exited");
    }
    // The session's list says its last turn failed (what the phone's list shows).
    assert.equal(await listedState(phone, sessionId), "failed");

    // A replay: the same tool card, the request withdrawn, the turn's end in the same words.
    const replayed = await replay(server.url, sessionId, dataDir);
    const live = editor.of(sessionId);
    assert.deepEqual(toolCards(replayed), toolCards(live));
    assert.equal(toolCards(replayed)[0]?.status, "interrupted");
    const marks = marksOf(replayed);
    const permission = marks.find((m) => "permission" in m);
    assert.ok(permission !== undefined && "permission" in permission, "the request's mark");
    assert.equal(permission.permission.settledBy, "interrupted");
    assert.deepEqual(permission.permission.outcome, { outcome: "cancelled" });
    assert.deepEqual(marks.at(-1), { turnEnd: { error: error.message, interrupted: "agent-exited" } });
    assert.equal(marks.filter((m) => "permissionAsked" in m).length, 0, "a settled request's asking is compacted away");

    // The agent is started again, and the next prompt works (the replay's load took the session: loaded again).
    await editor.connection.agent.request(methods.agent.session.load, { sessionId, cwd: dataDir, mcpServers: [] });
    assert.deepEqual(await editor.prompt(sessionId, "echo after the crash"), { stopReason: "end_turn" });
  });

  test("an agent that exits in the middle of a turn with a tool call running: the prompt says the turn was interrupted, the tool call fails as interrupted, live and replayed", async () => {
    const c = await person();
    const sessionId = await c.newSession(dataDir);
    const error = await rejection(c.prompt(sessionId, "echo starting\nstart execute Run the tests\nexit 3"));
    assert.equal(error.message, "Turn interrupted: the agent exited (agent fixture exited with code 3)");
    const failed = await c.until(() => c.of(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed"), "the tool call's end");
    assert.equal(toolCallInterruption(failed as { _meta?: Record<string, unknown> }), "agent-exited");

    const replayed = await replay(server.url, sessionId, dataDir);
    assert.deepEqual(toolCards(replayed), toolCards(c.of(sessionId)));
    assert.deepEqual(marksOf(replayed).at(-1), { turnEnd: { error: error.message, interrupted: "agent-exited" } });
    await c.connection.agent.request(methods.agent.session.load, { sessionId, cwd: dataDir, mcpServers: [] });
    assert.deepEqual(await c.prompt(sessionId, "echo again"), { stopReason: "end_turn" });
  });
});

/**
 * `acp-remote serve` as a child with the fixture agent, for the describe block
 * it is called in: a data folder of its own, started before the block's tests,
 * stopped with the persons that connected to it after them.
 */
function serveChild(dataDirPrefix: string): { readonly dataDir: string; readonly child: ManagedProcess; readonly url: string; person(): Promise<PersonClient> } {
  const dataDir = mkdtempSync(join(tmpdir(), dataDirPrefix));
  const forget = removeOnExit(dataDir);
  let serveProcess: ManagedProcess;
  let url: string;
  const clients: PersonClient[] = [];

  before(async () => {
    const port = await freePort();
    serveProcess = new ManagedProcess({
      name: "acp-remote serve",
      command: NODE,
      args: [CLI, "serve", "--port", String(port), "--data-dir", dataDir, "--token", TOKEN, "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`],
      // Killed with its agents, as a machine that loses the process would.
      group: true,
    });
    await serveProcess.start(/acp-remote listening on \S+/);
    url = (await serveProcess.waitForOutput(/acp-remote listening on (\S+)/))[1]!;
  });

  after(async () => {
    for (const c of clients) await c.close();
    await serveProcess.stop();
    rmSync(dataDir, { recursive: true, force: true });
    forget();
  });

  return {
    dataDir,
    get child() {
      return serveProcess;
    },
    get url() {
      return url;
    },
    async person() {
      const c = new PersonClient(url);
      clients.push(c);
      await c.initialize();
      return c;
    },
  };
}

describe("a sidecar killed while a turn waits on a permission", () => {
  const served = serveChild("acp-remote-interrupted-serve-");

  test("regression: a turn waiting on a permission when the server was killed stayed pending for ever; at the next start it is closed off (the server stopped, the tool call failed, the request withdrawn) before any client reads it, and a new prompt works", async () => {
    const editor = await served.person();
    const sessionId = await editor.newSession(served.dataDir);
    void editor.prompt(sessionId, "echo looking\npermission Edit README").catch(() => undefined);
    const asked = await editor.until(() => editor.asked[0], "the permission request");
    // The phone follows; its replay is read from the store, so what the turn did so far is written there.
    const phone = await served.person();
    await phone.connection.agent.request(AcpExt.sessionAttach, { sessionId });
    await phone.until(() => phone.asked[0], "the permission request on the phone");
    assert.ok(
      phone.of(sessionId).some((u) => u.sessionUpdate === "tool_call" && u.status === "pending"),
      "the phone's replay shows the tool call pending",
    );

    await served.child.kill();
    await served.child.start(/acp-remote listening on \S+/);

    const replayed = await replay(served.url, sessionId, served.dataDir);
    const cards = toolCards(replayed);
    assert.equal(cards.length, 1);
    assert.equal(cards[0]?.id, asked.params.toolCall.toolCallId);
    assert.equal(cards[0]?.status, "interrupted");
    const marks = marksOf(replayed);
    assert.deepEqual(marks.at(-1), { turnEnd: { error: "Turn interrupted: the server stopped", interrupted: "server-stopped" } });
    const permission = marks.find((m) => "permission" in m);
    assert.ok(permission !== undefined && "permission" in permission, "the request's mark");
    assert.equal(permission.permission.settledBy, "interrupted");
    assert.equal(permission.permission.toolCall.title, "Edit README");
    assert.deepEqual(permission.permission.outcome, { outcome: "cancelled" });
    assert.equal(marks.filter((m) => "permissionAsked" in m).length, 0, "the asking is settled");

    // Reloaded again, the same: the ending was written once, not at every read.
    assert.deepEqual(await replay(served.url, sessionId, served.dataDir), replayed);

    // The session lists its last turn as failed; a new prompt spawns the agent again and works.
    const again = await served.person();
    assert.equal(await listedState(again, sessionId), "failed");
    await again.connection.agent.request(methods.agent.session.load, { sessionId, cwd: served.dataDir, mcpServers: [] });
    assert.deepEqual(await again.prompt(sessionId, "echo after the restart"), { stopReason: "end_turn" });
    assert.ok(again.of(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" && u.content.text === "after the restart"));
  });
});

describe("a sidecar stopped at once (SIGINT) while a turn waits on a permission", () => {
  const served = serveChild("acp-remote-interrupted-stop-");

  test("the turn ends as the server stopping, as after a crash: its tool call failed, its request withdrawn, once", async () => {
    const c = await served.person();
    const sessionId = await c.newSession(served.dataDir);
    const turn = c.prompt(sessionId, "permission Edit README");
    await c.until(() => c.asked[0], "the permission request");
    process.kill(served.child.pid!, "SIGINT");
    await served.child.exited;
    await rejection(turn);
    await served.child.start(/acp-remote listening on \S+/);

    const replayed = await replay(served.url, sessionId, served.dataDir);
    assert.deepEqual(toolCards(replayed).map((card) => card.status), ["interrupted"]);
    const marks = marksOf(replayed);
    assert.deepEqual(marks.at(-1), { turnEnd: { error: "Turn interrupted: the server stopped", interrupted: "server-stopped" } });
    assert.equal(marks.filter((m) => "turnEnd" in m).length, 1, "one end");
    assert.equal(marks.filter((m) => "permission" in m).length, 1, "one withdrawal");
    assert.equal(toolCards(replayed).length, 1);
  });
});

describe("a journal that shows a turn started and not ended", () => {
  let dir: string;
  let store: SharedStore;
  let journal: Journal;
  const user: SessionUpdate = { sessionUpdate: "user_message_chunk", content: { type: "text", text: "go" }, messageId: "m1" };
  const toolCall = (id: string, status: ToolCallStatus): SessionUpdate => ({ sessionUpdate: "tool_call", toolCallId: id, title: `Tool ${id}`, kind: "edit", status });
  const asked = (toolCallId: string): SessionUpdate => markUpdate({ permissionAsked: { toolCall: { toolCallId, title: `Edit ${toolCallId}` }, options: PERMISSION_OPTIONS } });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-open-turn-"));
    store = openSqliteStore(join(dir, "store.sqlite"));
    journal = new Journal(store.sessions);
  });

  after(async () => {
    await journal.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function stored(sessionId: string, history: SessionUpdate[]): Promise<void> {
    for (const update of history) journal.append(sessionId, update);
    await journal.flush();
  }

  test("its open tool calls fail, its open requests are withdrawn and its end says the server stopped, once; a tool call that ended and a request settled stay as they were", async () => {
    const done: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId: "t0", status: "completed" };
    const settled = markUpdate({ permission: { toolCall: { toolCallId: "t0" }, options: PERMISSION_OPTIONS, outcome: { outcome: "selected", optionId: "allow_once" }, settledBy: "client" } });
    await stored("open", [user, toolCall("t0", "pending"), asked("t0"), settled, done, toolCall("t1", "in_progress"), asked("t1")]);
    assert.equal(await closeInterruptedTurn(journal, "open"), true);
    const history = await journal.entries("open");
    const cards = toolCards(history);
    assert.deepEqual(cards.map((c) => [c.id, c.status]), [["t0", "completed"], ["t1", "interrupted"]]);
    const marks = marksOf(history);
    assert.deepEqual(marks.map((m) => ("permission" in m ? `${m.permission.toolCall.toolCallId} ${m.permission.settledBy}` : "turnEnd" in m ? "end" : "asked")), ["t0 client", "t1 interrupted", "end"]);
    assert.deepEqual(marks.at(-1), { turnEnd: { error: "Turn interrupted: the server stopped", interrupted: "server-stopped" } });
    // Closed now: a second look finds nothing to do.
    assert.equal(await closeInterruptedTurn(journal, "open"), false);
  });

  test("a replay drops a request's asking once the mark that settles it came, and keeps the asking of one still open", () => {
    const settled = markUpdate({ permission: { toolCall: { toolCallId: "t0" }, options: PERMISSION_OPTIONS, outcome: { outcome: "cancelled" }, settledBy: "timeout" } });
    const history = [user, toolCall("t0", "pending"), asked("t0"), settled, toolCall("t1", "pending"), asked("t1")];
    const compacted = compactHistory(history);
    assert.deepEqual(compacted, [user, toolCall("t0", "pending"), settled, toolCall("t1", "pending"), asked("t1")]);
    assert.deepEqual(compactHistory(compacted), compacted, "compacting again changes nothing");
    assert.deepEqual(drawHistory(compacted), drawHistory(history), "the view draws the same");
  });

  test("a turn that ended, and a session never prompted, are left as they are", async () => {
    await stored("ended", [user, toolCall("t0", "pending"), markUpdate({ turnEnd: { stopReason: "end_turn" } }), { sessionUpdate: "available_commands_update", availableCommands: [] }]);
    assert.equal(await closeInterruptedTurn(journal, "ended"), false);
    await stored("fresh", [{ sessionUpdate: "available_commands_update", availableCommands: [] }]);
    assert.equal(await closeInterruptedTurn(journal, "fresh"), false);
    assert.equal(await closeInterruptedTurn(journal, "unknown"), false);
  });

  test("a turn longer than the entries read first is found from its start: the whole journal is read", async () => {
    const many: SessionUpdate[] = Array.from({ length: 40 }, (_, i) => toolCall(`w${i}`, "completed"));
    await stored("long", [markUpdate({ turnEnd: { stopReason: "end_turn" } }), user, toolCall("first", "pending"), ...many]);
    assert.equal(await closeInterruptedTurn(journal, "long", 8), true);
    const cards = toolCards(await journal.entries("long"));
    assert.deepEqual(cards.filter((c) => c.status === "interrupted").map((c) => c.id), ["first"]);
  });
});
