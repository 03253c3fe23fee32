// Several clients on one session, and sessions driven from the editor, with
// the hub and a real agent process (the fixture over stdio). Each test is a
// row of what the multi-client attach proposal and SDK 2.4's session methods
// promise: who sees what, who may answer, what a resuming client learns.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { TurnEvent } from "../../protocol/control.ts";
import type { JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import type { AgentHub } from "../../sidecar/hub/hub.ts";
import { PersonFolders } from "../../sidecar/hub/person-folders.ts";
import { OWNER, type Principal } from "../../sidecar/hub/types.ts";
import { type Delivered, newSession, open, prompt, type TestClient } from "../helpers/hub-test-client.ts";
import { startTempHub } from "../helpers/temp-hub.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const fixture: AgentSpec = { name: "fixture", command: process.execPath, args: [FIXTURE] };
const ALICE: Principal = { id: "alice", label: "alice" };
const BOB: Principal = { id: "bob", label: "bob" };

const isMethod = (method: string) => (d: Delivered) => "method" in d.message && d.message.method === method;
const userTexts = (client: TestClient, sessionId: string) => client.texts(sessionId, "user_message_chunk");
const meta = (result: unknown) => (result as { _meta?: { acpRemote?: { running?: boolean } } })._meta?.acpRemote;

describe("several clients on one session (session/attach, session/detach) and the editor", () => {
  let dir: string;
  let hub: AgentHub;
  let close: (() => Promise<void>) | undefined;

  before(async () => {
    // Alice and Bob may use the test's folder.
    ({ dir, hub, close } = await startTempHub("acp-remote-multi-", (dir) => ({ agents: [fixture], folders: new PersonFolders({ granted: new Map([[ALICE.id, [dir]], [BOB.id, [dir]]]) }), log: () => undefined })));
  });

  after(async () => {
    await close?.();
  });

  test("initialize offers attach, resume, close and delete", async () => {
    const client = await open(hub, ALICE);
    const init = await client.connection.initialize({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const caps = (init.result as { agentCapabilities: { sessionCapabilities: Record<string, unknown> } }).agentCapabilities.sessionCapabilities;
    for (const name of ["attach", "resume", "close", "delete", "list"]) assert.deepEqual(caps[name], {}, name);
    client.connection.close();
  });

  test("an attached client sees every turn: the other client's prompt as user_message_chunk, then the agent's updates", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    await a.call("session/prompt", prompt(sessionId, "echo first"));
    const b = await open(hub, ALICE);
    const attached = await b.call("session/attach", { sessionId });
    assert.equal(attached.error, undefined, JSON.stringify(attached.error));
    const result = attached.result as { clientId: string; historyPolicy: string; connectedClients: string[] };
    assert.equal(result.historyPolicy, "full");
    assert.equal(result.clientId, b.connectionId);
    assert.deepEqual(result.connectedClients.sort(), [a.connectionId, b.connectionId].sort());
    assert.equal(b.texts(sessionId), "first", "full history replayed");

    await a.call("session/prompt", prompt(sessionId, "echo second"));
    assert.equal(b.texts(sessionId), "firstsecond");
    assert.equal(userTexts(b, sessionId), "echo firstecho second");
    assert.equal(userTexts(a, sessionId), "", "the sender is not echoed its own prompt");

    // Either side may prompt.
    await b.call("session/prompt", prompt(sessionId, "echo third"));
    assert.equal(a.texts(sessionId), "firstsecondthird");
    assert.equal(userTexts(a, sessionId), "echo third");
    a.connection.close();
    b.connection.close();
  });

  test("historyPolicy none replays nothing; session/detach stops the updates, the session goes on for the others", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    await a.call("session/prompt", prompt(sessionId, "echo before"));
    const b = await open(hub, ALICE);
    await b.call("session/attach", { sessionId, historyPolicy: "none" });
    assert.equal(b.updates(sessionId).length, 0);
    const detached = await b.call("session/detach", { sessionId });
    assert.deepEqual(detached.result, {});
    await a.call("session/prompt", prompt(sessionId, "echo after"));
    assert.equal(b.updates(sessionId).length, 0, "nothing after detach");
    assert.equal(a.texts(sessionId), "beforeafter");
    const again = await b.call("session/prompt", prompt(sessionId, "echo no"));
    assert.equal(again.error?.code, -32002, "a detached client may not prompt");
    a.connection.close();
    b.connection.close();
  });

  test("a permission request goes to every client; the first answer wins, the other is withdrawn and attachers get permission_resolved", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    const b = await open(hub, ALICE);
    await b.call("session/attach", { sessionId, historyPolicy: "none" });
    const turn = a.request("session/prompt", prompt(sessionId, "permission Edit README"));
    const toA = (await a.waitFor(isMethod("session/request_permission"))).message as JsonRpcRequest;
    const toB = (await b.waitFor(isMethod("session/request_permission"))).message as JsonRpcRequest;
    assert.equal(toA.id, toB.id, "one request, offered to both");
    b.connection.receive({ jsonrpc: "2.0", id: toB.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
    const { response } = await turn;
    assert.deepEqual(response.result, { stopReason: "end_turn" });
    assert.match(a.texts(sessionId), /outcome: selected allow_once/);
    const withdrawn = (await a.waitFor(isMethod("$/cancel_request"))).message as { params: { requestId: string } };
    assert.equal(withdrawn.params.requestId, toA.id);
    assert.equal(b.delivered.filter(isMethod("$/cancel_request")).length, 0, "the answering client is not told to withdraw");
    const notice = b.updates(sessionId).find((u) => u["sessionUpdate"] === "permission_resolved");
    assert.deepEqual(notice, {
      sessionUpdate: "permission_resolved",
      requestId: toB.id,
      outcome: { outcome: "selected", optionId: "allow_once" },
      clientId: b.connectionId,
      // Who settled it, in our `_meta` (a client with no paired device: no device's name).
      _meta: { acpRemote: { settledBy: "client" } },
    });
    assert.equal(a.updates(sessionId).some((u) => u["sessionUpdate"] === "permission_resolved"), false, "only attachers get the proposal's notice");
    a.connection.close();
    b.connection.close();
  });

  test("another person cannot attach, resume or delete a session: it is unknown to them", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    const bob = await open(hub, BOB);
    for (const method of ["session/attach", "session/resume", "session/delete"]) {
      const r = await bob.call(method, { sessionId, cwd: dir });
      assert.equal(r.error?.code, -32002, method);
    }
    a.connection.close();
    bob.connection.close();
  });

  test("session/resume replays nothing and says a turn is still running; session/load and session/list say it too", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    await a.call("session/prompt", prompt(sessionId, "echo earlier"));
    const turn = a.request("session/prompt", prompt(sessionId, "slow 60000"));
    const b = await open(hub, ALICE);
    const listed = await b.call("session/list", {});
    const entry = (listed.result as { sessions: Array<{ sessionId: string }> }).sessions.find((s) => s.sessionId === sessionId);
    assert.equal(meta(entry)?.running, true);
    const resumed = await b.call("session/resume", { sessionId, cwd: dir });
    assert.equal(resumed.error, undefined, JSON.stringify(resumed.error));
    assert.equal(meta(resumed.result)?.running, true);
    assert.deepEqual((resumed.result as { modes: { currentModeId: string } }).modes.currentModeId, "ask");
    assert.equal(b.updates(sessionId).length, 0, "resume replays nothing");
    // resume takes the session, as load does: the old connection no longer follows it.
    assert.equal(a.connection.sessionAccess(sessionId), "loadable");
    b.connection.receive({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    assert.deepEqual((await turn).response.result, { stopReason: "cancelled" });
    const c = await open(hub, ALICE);
    const loaded = await c.call("session/load", { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(meta(loaded.result)?.running, false);
    assert.equal(c.texts(sessionId), "earlier");
    for (const client of [a, b, c]) client.connection.close();
  });

  test("session/delete ends a session of this person, followed here or not; it leaves session/list", async () => {
    const a = await open(hub, ALICE);
    const sessionId = await newSession(a, dir);
    a.connection.detach();
    const b = await open(hub, ALICE);
    assert.deepEqual((await b.call("session/delete", { sessionId })).result, {});
    const listed = (await b.call("session/list", {})).result as { sessions: Array<{ sessionId: string }> };
    assert.equal(listed.sessions.some((s) => s.sessionId === sessionId), false);
    assert.equal((await b.call("session/load", { sessionId, cwd: dir, mcpServers: [] })).error?.code, -32002);
    b.connection.close();
  });

  test("the editor starts a session for the server's person, prompts it, and a client following it sees the editor's turn", async () => {
    const turns: TurnEvent[] = [];
    const unsubscribe = hub.onTurn((e) => turns.push(e));
    const opened = await hub.newSession({ cwd: dir });
    assert.equal(opened.agent, "fixture");
    assert.equal(opened.modes?.currentModeId, "ask");
    assert.equal(opened.running, false);
    const owner = await open(hub, OWNER);
    const listed = (await owner.call("session/list", {})).result as { sessions: Array<{ sessionId: string }> };
    assert.ok(listed.sessions.some((s) => s.sessionId === opened.sessionId), "the owner's devices list the editor's sessions");
    await owner.call("session/load", { sessionId: opened.sessionId, cwd: dir, mcpServers: [] });

    const result = await hub.prompt({ sessionId: opened.sessionId, prompt: [{ type: "text", text: "echo from the editor" }] });
    assert.deepEqual(result, { stopReason: "end_turn" });
    assert.equal(userTexts(owner, opened.sessionId), "echo from the editor");
    assert.equal(owner.texts(opened.sessionId), "from the editor");
    assert.deepEqual(turns.filter((t) => t.sessionId === opened.sessionId), [
      { sessionId: opened.sessionId, state: "started" },
      { sessionId: opened.sessionId, state: "ended", stopReason: "end_turn" },
    ]);
    // A client's turn is told to the editor as well.
    await owner.call("session/prompt", prompt(opened.sessionId, "echo from the phone"));
    assert.equal(turns.filter((t) => t.sessionId === opened.sessionId && t.state === "ended").length, 2);
    const reopened = await hub.openSession(opened.sessionId);
    assert.deepEqual(
      reopened.updates.filter((n) => n.update.sessionUpdate === "user_message_chunk").map((n) => (n.update as { content: { text: string } }).content.text),
      ["echo from the editor", "echo from the phone"],
    );
    unsubscribe();
    owner.connection.close();
  });

  test("a mode set in the editor reaches the clients as current_mode_update; one set by a client reaches the editor", async () => {
    const opened = await hub.newSession({ cwd: dir });
    const client = await open(hub, OWNER);
    await client.call("session/load", { sessionId: opened.sessionId, cwd: dir, mcpServers: [] });
    const states: string[] = [];
    const unsubscribe = hub.onSessionState((e) => {
      if (e.sessionId === opened.sessionId) states.push(e.modes?.currentModeId ?? "?");
    });
    await hub.setMode({ sessionId: opened.sessionId, modeId: "code" });
    const update = client.updates(opened.sessionId).find((u) => u["sessionUpdate"] === "current_mode_update");
    assert.deepEqual(update, { sessionUpdate: "current_mode_update", currentModeId: "code" });
    const fromClient = await client.call("session/set_mode", { sessionId: opened.sessionId, modeId: "ask" });
    assert.equal(fromClient.error, undefined);
    assert.deepEqual(states, ["code", "ask"]);
    assert.equal((await hub.openSession(opened.sessionId)).modes?.currentModeId, "ask");
    await assert.rejects(hub.setMode({ sessionId: opened.sessionId, modeId: "nope" }), { code: -32602 });
    await assert.rejects(hub.prompt({ sessionId: "no-such-session", prompt: [{ type: "text", text: "x" }] }), { code: -32002 });
    await assert.rejects(hub.newSession({ agent: "nope", cwd: dir }), { name: "UnknownAgentError" });
    unsubscribe();
    client.connection.close();
  });
});
