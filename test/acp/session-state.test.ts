// A session's state, told to its followers as the ACP v2 draft's
// `state_update` (running, requires_action, idle with the turn's stop
// reason) to the clients that asked for it in initialize, and shown by
// session/list. The real sidecar with its fixture agent; the clients are the
// client library's transports over WebSocket and Streamable HTTP (h2c), and
// the official SDK client, to which the update is unknown.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { formatWithOptions } from "node:util";
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { HttpTransport, WebSocketTransport, type ClientTransport } from "../../client/index.ts";
import { isRecord, type JsonRpcMessage, type JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import { startSidecar } from "../helpers/sidecar-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const WAIT_MS = 20_000;
/** What a client puts in initialize to be told its sessions' state. */
const ASKS_FOR_STATE = { _meta: { acpRemote: { stateUpdates: true } } };

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

let shared: StartedServer | undefined;
async function sidecar(): Promise<StartedServer> {
  if (shared === undefined) {
    shared = await startSidecar();
    const server = shared;
    cleanups.push(() => server.close());
  }
  return shared;
}

/** One client connection over a client-library transport: requests, answers, and what it received. */
class Peer {
  readonly messages: JsonRpcMessage[] = [];
  readonly #transport: ClientTransport;
  readonly #waiters: Array<{ pred: (m: JsonRpcMessage) => boolean; resolve: (m: JsonRpcMessage) => void }> = [];
  #nextId = 1;

  constructor(transport: ClientTransport) {
    this.#transport = transport;
    transport.onmessage = (m) => {
      this.messages.push(m);
      for (const w of [...this.#waiters]) {
        if (w.pred(m)) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    };
    transport.onerror = () => {};
    cleanups.push(() => transport.close().catch(() => undefined));
  }

  static async open(kind: "websocket" | "http", url: string, clientCapabilities: Record<string, unknown>): Promise<Peer> {
    const transport = kind === "websocket" ? new WebSocketTransport(url, { token: TOKEN }) : new HttpTransport(url, { token: TOKEN });
    await transport.start();
    const peer = new Peer(transport);
    const init = await peer.request("initialize", { protocolVersion: 1, clientCapabilities });
    assert.equal(init.error, undefined, JSON.stringify(init.error));
    return peer;
  }

  /** The first message (received so far or later) that matches, within the deadline. */
  next(pred: (m: JsonRpcMessage) => boolean, what: string): Promise<JsonRpcMessage> {
    const found = this.messages.find(pred);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
      this.#waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  async request(method: string, params: unknown): Promise<JsonRpcResponse> {
    const id = this.#nextId++;
    await this.#transport.send({ jsonrpc: "2.0", id, method, params } as JsonRpcMessage);
    return (await this.next((m) => "id" in m && m.id === id && !("method" in m), `answer to ${method}`)) as JsonRpcResponse;
  }

  send(message: JsonRpcMessage): Promise<void> {
    return this.#transport.send(message);
  }

  /** The state_updates of the session received so far, in order. */
  states(sessionId: string): Array<Record<string, unknown>> {
    return this.messages.flatMap((m) => {
      const update = sessionUpdate(m, sessionId);
      return update?.["sessionUpdate"] === "state_update" ? [update] : [];
    });
  }

  /** Waits for the session's `count`-th state_update (1-based) and returns it. */
  async nthState(sessionId: string, count: number): Promise<Record<string, unknown>> {
    let seen = 0;
    const message = await this.next((m) => sessionUpdate(m, sessionId)?.["sessionUpdate"] === "state_update" && ++seen === count, `state_update #${count}`);
    return sessionUpdate(message, sessionId)!;
  }

  /** What session/list says of the session: `_meta.acpRemote`. */
  async listed(sessionId: string): Promise<{ running?: unknown; state?: unknown }> {
    const answer = await this.request("session/list", {});
    const sessions = (answer.result as { sessions: Array<{ sessionId: string; _meta?: { acpRemote?: { running?: unknown; state?: unknown } } }> }).sessions;
    const entry = sessions.find((s) => s.sessionId === sessionId);
    assert.ok(entry, `session ${sessionId} is listed`);
    return entry._meta?.acpRemote ?? {};
  }
}

function sessionUpdate(m: JsonRpcMessage, sessionId: string): Record<string, unknown> | undefined {
  if (!("method" in m) || m.method !== "session/update" || !isRecord(m.params) || m.params["sessionId"] !== sessionId) return undefined;
  const update = m.params["update"];
  return isRecord(update) ? update : undefined;
}

const isPermissionRequest = (m: JsonRpcMessage) => "method" in m && m.method === "session/request_permission" && "id" in m;
const prompt = (sessionId: string, text: string) => ({ sessionId, prompt: [{ type: "text", text }] });

describe("a session's state: state_update to the followers that asked, and session/list", () => {
  for (const kind of ["websocket", "http"] as const) {
    const profile = kind === "websocket" ? "WebSocket" : "Streamable HTTP (h2c)";
    test(`${profile}: a follower learns a turn's running, requires_action (permission asked), running (answered) and idle with its stop reason from state_update, without polling session/list; session/list says the same`, async () => {
      const server = await sidecar();
      const owner = await Peer.open(kind, server.acpUrl, ASKS_FOR_STATE);
      const created = await owner.request("session/new", { cwd: "/tmp", mcpServers: [] });
      const sessionId = (created.result as { sessionId: string }).sessionId;
      const follower = await Peer.open(kind, server.acpUrl, ASKS_FOR_STATE);
      const attached = await follower.request("session/attach", { sessionId, historyPolicy: "none" });
      assert.equal(attached.error, undefined, JSON.stringify(attached.error));
      // A client that did not ask is told nothing it does not know.
      const other = await Peer.open(kind, server.acpUrl, {});
      await other.request("session/attach", { sessionId, historyPolicy: "none" });

      assert.deepEqual(await follower.nthState(sessionId, 1), { sessionUpdate: "state_update", state: "idle" }, "attach is answered after a snapshot of the state");
      assert.equal((await follower.listed(sessionId)).state, "idle");

      // A turn that asks for permission, then runs until cancelled.
      const turn = owner.request("session/prompt", prompt(sessionId, "permission Edit README\nslow 60000"));
      assert.deepEqual(await follower.nthState(sessionId, 2), { sessionUpdate: "state_update", state: "running" });
      const asked = (await follower.next(isPermissionRequest, "the permission request")) as { id: string };
      assert.deepEqual(await follower.nthState(sessionId, 3), { sessionUpdate: "state_update", state: "requires_action" });
      assert.deepEqual(await follower.listed(sessionId), { running: true, state: "requires_action" });

      await follower.send({ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
      assert.deepEqual(await follower.nthState(sessionId, 4), { sessionUpdate: "state_update", state: "running" }, "answered: the turn runs again");
      assert.deepEqual(await follower.listed(sessionId), { running: true, state: "running" });

      await owner.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
      assert.deepEqual(await follower.nthState(sessionId, 5), { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" }, "the turn's end, with its stop reason");
      assert.deepEqual((await turn).result, { stopReason: "cancelled" });
      assert.deepEqual(await follower.listed(sessionId), { running: false, state: "idle" });

      // A turn that ends by itself, and one that fails.
      await owner.request("session/prompt", prompt(sessionId, "echo done"));
      assert.deepEqual(await follower.nthState(sessionId, 7), { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
      const failed = await owner.request("session/prompt", prompt(sessionId, "error -32000 the agent broke"));
      assert.equal(failed.error?.message, "the agent broke");
      assert.deepEqual(await follower.nthState(sessionId, 9), {
        sessionUpdate: "state_update",
        state: "idle",
        stopReason: "error",
        error: { code: -32603, message: "the agent broke" },
      });
      assert.deepEqual(await follower.listed(sessionId), { running: false, state: "failed" }, "an idle session whose last turn failed");

      assert.deepEqual(
        follower.states(sessionId).map((u) => [u["state"], u["stopReason"]]),
        [["idle", undefined], ["running", undefined], ["requires_action", undefined], ["running", undefined], ["idle", "cancelled"], ["running", undefined], ["idle", "end_turn"], ["running", undefined], ["idle", "error"]],
        "each change once, in order",
      );
      // The client that prompted is told too, before each prompt's answer.
      assert.deepEqual(owner.states(sessionId).map((u) => u["state"]), ["running", "requires_action", "running", "idle", "running", "idle", "running", "idle"]);
      await other.next((m) => JSON.stringify(sessionUpdate(m, sessionId) ?? {}).includes('"text":"done"'), "the other client's update");
      assert.deepEqual(other.states(sessionId), [], "a client that did not ask gets no state_update");
    });
  }

  test("initialize says the server offers state updates (_meta.acpRemote.stateUpdates)", async () => {
    const server = await sidecar();
    const transport = new WebSocketTransport(server.acpUrl, { token: TOKEN });
    await transport.start();
    const peer = new Peer(transport);
    const init = await peer.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    assert.equal((init.result as { _meta?: { acpRemote?: { stateUpdates?: unknown } } })._meta?.acpRemote?.stateUpdates, true);
  });

  test("session/load of a session waiting for a permission is followed by a requires_action snapshot, after the replay and the open request", async () => {
    const server = await sidecar();
    const owner = await Peer.open("websocket", server.acpUrl, ASKS_FOR_STATE);
    const sessionId = ((await owner.request("session/new", { cwd: "/tmp", mcpServers: [] })).result as { sessionId: string }).sessionId;
    const turn = owner.request("session/prompt", prompt(sessionId, "echo before\npermission Edit README"));
    await owner.next(isPermissionRequest, "the permission request");
    const phone = await Peer.open("http", server.acpUrl, ASKS_FOR_STATE);
    const loaded = await phone.request("session/load", { sessionId, cwd: "/tmp", mcpServers: [] });
    assert.equal(loaded.error, undefined, JSON.stringify(loaded.error));
    const request = (await phone.next(isPermissionRequest, "the request offered again")) as { id: string };
    assert.deepEqual(await phone.nthState(sessionId, 1), { sessionUpdate: "state_update", state: "requires_action" });
    const order = (m: JsonRpcMessage) => phone.messages.indexOf(m);
    const replayed = await phone.next((m) => JSON.stringify(sessionUpdate(m, sessionId) ?? {}).includes('"text":"before"'), "the replay");
    const snapshot = await phone.next((m) => sessionUpdate(m, sessionId)?.["sessionUpdate"] === "state_update", "the snapshot");
    assert.ok(order(replayed) < order(snapshot) && order(request as JsonRpcMessage) < order(snapshot), "the snapshot comes after the replay and the open request");
    await phone.send({ jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
    assert.deepEqual((await turn).result, { stopReason: "end_turn" });
    assert.deepEqual(await phone.nthState(sessionId, 3), { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  });

  test("the SDK client, asking for state updates, gets them and keeps working: an update it does not know breaks nothing", async () => {
    const server = await sidecar();
    const updates: SessionNotification[] = [];
    /** Every message the SDK's stream delivered, before the SDK reads it. */
    const raw: unknown[] = [];
    const app = client({ name: "session-state-test" })
      .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
        updates.push(params);
      })
      .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }));
    const stream = createWebSocketStream(`${server.url.replace(/^http/, "ws")}/acp`, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } });
    const tapped = {
      writable: stream.writable,
      readable: stream.readable.pipeThrough(new TransformStream({ transform: (message, out) => (raw.push(message), out.enqueue(message)) })),
    } as typeof stream;
    const connection = app.connect(tapped);
    cleanups.push(async () => {
      connection.close();
      await connection.closed.catch(() => undefined);
    });
    // The SDK says what it could not read on console.error: kept here, to be read below.
    const complaints: string[] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => complaints.push(formatWithOptions({ breakLength: Infinity }, ...args));
    try {
      const init = await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: ASKS_FOR_STATE });
      assert.equal((init as { _meta?: { acpRemote?: { stateUpdates?: unknown } } })._meta?.acpRemote?.stateUpdates, true);
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
      const first = await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Edit README\necho first" }] });
      assert.equal(first.stopReason, "end_turn");
      const second = await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo second" }] });
      assert.equal(second.stopReason, "end_turn");
    } finally {
      console.error = consoleError;
    }

    const states = raw.flatMap((m) => {
      const update = isRecord(m) && isRecord(m["params"]) ? m["params"]["update"] : undefined;
      return isRecord(update) && update["sessionUpdate"] === "state_update" ? [[update["state"], update["stopReason"]]] : [];
    });
    assert.deepEqual(states, [["running", undefined], ["requires_action", undefined], ["running", undefined], ["idle", "end_turn"], ["running", undefined], ["idle", "end_turn"]]);
    // Each one it did not know is reported as invalid params of session/update, and nothing else went wrong.
    assert.equal(complaints.length, states.length, complaints.join("\n"));
    for (const complaint of complaints) assert.match(complaint, /session\/update.*Invalid params/);
    // The updates it knows still reach it, before and after those it does not.
    const texts = updates.flatMap((n) => (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? [n.update.content.text] : []));
    assert.deepEqual(texts.filter((t) => t === "first" || t === "second"), ["first", "second"]);
  });
});
