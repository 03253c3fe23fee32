// The hub between remote connections and real agent processes (the fixture
// agent over stdio). The test plays the transport: it implements ClientLink and
// records which session each message belongs to and what each response answers.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { type AgentHub, createHub } from "../../sidecar/hub/hub.ts";
import { OWNER, type EditorLink, type Principal } from "../../sidecar/hub/types.ts";
import { PersonFolders } from "../../sidecar/hub/person-folders.ts";
import { newSession, open, prompt, TestClient, untilStatus } from "../helpers/hub-test-client.ts";
import { startTempHub } from "../helpers/temp-hub.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const fixture = (name = "fixture", env: Record<string, string> = {}): AgentSpec => ({ name, command: process.execPath, args: [FIXTURE], env });

const ALICE: Principal = { id: "alice", label: "alice" };
const BOB: Principal = { id: "bob", label: "bob" };
/** Alice and Bob may use the test's folder. */
const folders = (dir: string): PersonFolders => new PersonFolders({ granted: new Map([[ALICE.id, [dir]], [BOB.id, [dir]]]) });

describe("hub", () => {
  let dir: string;
  let hub: AgentHub;
  let close: (() => Promise<void>) | undefined;

  before(async () => {
    ({ dir, hub, close } = await startTempHub("acp-remote-hub-", (dir) => ({ agents: [fixture()], folders: folders(dir), log: () => undefined, limits: { agentRestartMinMs: 50 } })));
  });

  after(async () => {
    await close?.();
  });

  test("initialize answers the agent's capabilities with loadSession and session/list on", async () => {
    const client = new TestClient(ALICE);
    client.connection = hub.connect(client);
    const init = await client.connection.initialize({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 1 } });
    assert.equal(init.id, 7);
    const result = init.result as { protocolVersion: number; agentCapabilities: { loadSession: boolean; sessionCapabilities: { list: object } } };
    assert.equal(result.protocolVersion, 1);
    assert.equal(result.agentCapabilities.loadSession, true);
    assert.deepEqual(result.agentCapabilities.sessionCapabilities.list, {});
    client.connection.close();
  });

  test("connect to an unknown agent throws UnknownAgentError", () => {
    assert.throws(() => hub.connect(new TestClient(ALICE), { agent: "nope" }), { name: "UnknownAgentError" });
  });

  test("a prompt's updates and response belong to its session", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    assert.equal(client.connection.sessionAccess(sessionId), "attached");
    const { response, stream } = await client.request("session/prompt", prompt(sessionId, "think let me see\necho hello"));
    assert.equal(stream, sessionId);
    assert.deepEqual(response.result, { stopReason: "end_turn" });
    assert.equal(client.texts(sessionId), "hello");
    assert.equal(client.texts(sessionId, "agent_thought_chunk"), "let me see");
    client.connection.close();
  });

  test("a permission request reaches the client; its answer reaches the agent", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    const turn = client.request("session/prompt", prompt(sessionId, "permission Edit README"));
    const asked = await client.waitFor((d) => "method" in d.message && d.message.method === "session/request_permission");
    assert.equal(asked.stream, sessionId);
    const request = asked.message as { id: string; params: { sessionId: string; options: Array<{ optionId: string }> } };
    assert.equal(request.params.sessionId, sessionId);
    assert.equal(hub.status().permissions.length, 1);
    client.connection.receive({ jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
    const { response } = await turn;
    assert.deepEqual(response.result, { stopReason: "end_turn" });
    assert.match(client.texts(sessionId), /outcome: selected allow_once/);
    assert.equal(hub.status().permissions.length, 0);
    client.connection.close();
  });

  test("the editor answers first: the client's request is withdrawn with $/cancel_request", async () => {
    // The editor is asked for its owner's sessions.
    const client = await open(hub, OWNER);
    const sessionId = await newSession(client, dir);
    let offered = 0;
    const editor: EditorLink = {
      host: { fs: false, terminal: false },
      requestPermission: async (info) => {
        offered++;
        assert.equal(info.sessionId, sessionId);
        // Answer once the client has been offered the request too.
        await client.waitFor((d) => "method" in d.message && d.message.method === "session/request_permission");
        return { outcome: { outcome: "selected", optionId: "reject_once" } };
      },
      hostRequest: () => Promise.reject(new Error("not served")),
    };
    hub.setEditor(editor);
    try {
      await client.request("session/prompt", prompt(sessionId, "permission Run tests"));
      assert.equal(offered, 1);
      assert.match(client.texts(sessionId), /outcome: selected reject_once/);
      const asked = client.delivered.find((d) => "method" in d.message && d.message.method === "session/request_permission");
      const withdrawn = client.delivered.find((d) => "method" in d.message && d.message.method === "$/cancel_request");
      assert.ok(withdrawn, "the client's prompt is withdrawn");
      assert.deepEqual((withdrawn.message as { params: unknown }).params, { requestId: (asked?.message as { id: string }).id });
    } finally {
      hub.setEditor(undefined);
      client.connection.close();
    }
  });

  test("the client answers first: the editor's request is aborted", async () => {
    // The editor is asked for its owner's sessions.
    const client = await open(hub, OWNER);
    const sessionId = await newSession(client, dir);
    let aborted = false;
    hub.setEditor({
      host: { fs: false, terminal: false },
      requestPermission: (_info, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("withdrawn"));
          });
        }),
      hostRequest: () => Promise.reject(new Error("not served")),
    });
    try {
      const turn = client.request("session/prompt", prompt(sessionId, "permission Delete build"));
      const asked = await client.waitFor((d) => "method" in d.message && d.message.method === "session/request_permission");
      client.connection.receive({ jsonrpc: "2.0", id: (asked.message as { id: string }).id, result: { outcome: { outcome: "selected", optionId: "allow_always" } } });
      await turn;
      assert.equal(aborted, true);
      assert.match(client.texts(sessionId), /outcome: selected allow_always/);
    } finally {
      hub.setEditor(undefined);
      client.connection.close();
    }
  });

  test("session/cancel ends a running turn with stopReason cancelled", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    const turn = client.request("session/prompt", prompt(sessionId, "echo started\nslow 20000"));
    // The turn is under way once its first output arrives.
    await client.waitFor((d) => "method" in d.message && client.texts(sessionId) === "started");
    client.connection.receive({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    const { response } = await turn;
    assert.deepEqual(response.result, { stopReason: "cancelled" });
    client.connection.close();
  });

  test("a dropped connection detaches: the turn goes on, session/load elsewhere replays the whole history", async () => {
    const first = await open(hub, ALICE);
    const sessionId = await newSession(first, dir);
    await first.request("session/prompt", prompt(sessionId, "echo one"));
    first.connection.receive({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: prompt(sessionId, "slow 400\necho two") });
    first.connection.detach();
    assert.equal(hub.status().sessions.find((s) => s.sessionId === sessionId)?.state, "detached");

    const second = await open(hub, ALICE);
    assert.equal(second.connection.sessionAccess(sessionId), "loadable");
    // Let the detached turn finish: its output is journaled.
    // (Its last output is journaled and the turn is over; "running" alone is also false before the turn starts.)
    await untilStatus(hub, (status) => status.sessions.some((s) => s.sessionId === sessionId && !s.running));
    // The turn is over; its output reaches the journal with the next flush.
    for (const deadline = Date.now() + 5_000; !JSON.stringify((await hub.transcript(sessionId)).updates).includes('"text":"two"'); ) {
      assert.ok(Date.now() < deadline, "the detached turn's output was journaled");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { response, stream, answers } = await second.request("session/load", { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(response.error, undefined);
    // The transport's rule puts it on the connection stream (test/acp); the hub says what it answers.
    assert.deepEqual({ stream, answers }, { stream: sessionId, answers: "session/load" });
    assert.equal(second.texts(sessionId), "onetwo");
    const users = second.updates(sessionId).filter((u) => u["sessionUpdate"] === "user_message_chunk");
    assert.deepEqual(users.map((u) => (u["content"] as { text: string }).text), ["echo one", "slow 400\necho two"]);
    assert.equal(second.connection.sessionAccess(sessionId), "attached");
    // The session goes on on the new connection.
    const again = await second.request("session/prompt", prompt(sessionId, "echo three"));
    assert.deepEqual(again.response.result, { stopReason: "end_turn" });
    second.connection.close();
  });

  test("a session of another principal is unknown", async () => {
    const alice = await open(hub, ALICE);
    const sessionId = await newSession(alice, dir);
    alice.connection.detach();
    const bob = await open(hub, BOB);
    assert.equal(bob.connection.sessionAccess(sessionId), "unknown");
    const { response } = await bob.request("session/load", { sessionId, cwd: dir, mcpServers: [] });
    assert.equal(response.error?.code, -32002);
    const { response: prompted } = await bob.request("session/prompt", prompt(sessionId, "echo hi"));
    assert.equal(prompted.error?.code, -32002);
    bob.connection.close();
  });

  test("close (DELETE) ends the connection's sessions for good", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    client.connection.close();
    const other = await open(hub, ALICE);
    assert.equal(other.connection.sessionAccess(sessionId), "unknown");
    assert.equal(hub.status().sessions.some((s) => s.sessionId === sessionId), false);
    other.connection.close();
  });

  test("session/list lists the principal's own sessions", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    const { response } = await client.request("session/list", {});
    const sessions = (response.result as { sessions: Array<{ sessionId: string }> }).sessions;
    assert.ok(sessions.some((s) => s.sessionId === sessionId));
    const bob = await open(hub, BOB);
    const { response: bobs } = await bob.request("session/list", {});
    assert.equal((bobs.result as { sessions: unknown[] }).sessions.some((s) => (s as { sessionId: string }).sessionId === sessionId), false);
    client.connection.close();
    bob.connection.close();
  });

  test("an agent that exits mid-prompt fails the prompt; the session works again after the restart", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    await client.request("session/prompt", prompt(sessionId, "echo before"));
    const { response } = await client.request("session/prompt", prompt(sessionId, "exit 3"));
    assert.equal(response.error?.code, -32603);
    const { response: after } = await client.request("session/prompt", prompt(sessionId, "echo after"));
    assert.deepEqual(after.result, { stopReason: "end_turn" });
    assert.match(client.texts(sessionId), /after$/);
    client.connection.close();
  });

  test("the agent's file reads are served by the sidecar inside the session's folder", async () => {
    const client = await open(hub, ALICE);
    const sessionId = await newSession(client, dir);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(dir, "notes.txt"), "inside");
    await client.request("session/prompt", prompt(sessionId, `read ${join(dir, "notes.txt")}\nread /etc/hostname`));
    const text = client.texts(sessionId);
    assert.match(text, /read: inside/);
    assert.match(text, /error: -32602 \/etc\/hostname is outside the session's folders/, "a path outside the session's folders is refused");
    client.connection.close();
  });

  test("one-shot runs: updates come to the caller, permissions follow the policy", async () => {
    const updates: string[] = [];
    const result = await hub.runPrompt("fixture", [{ type: "text", text: "think hmm\necho done\npermission Write file" }], {
      signal: new AbortController().signal,
      owner: OWNER.id,
      onUpdate: (u) => updates.push(u.sessionUpdate),
      permissions: "reject",
    });
    assert.equal(result.stopReason, "end_turn");
    assert.ok(updates.includes("agent_thought_chunk"));
    assert.ok(updates.includes("agent_message_chunk"));
    assert.equal(hub.status().sessions.some((s) => s.agent === "fixture" && s.owner === "deferred"), false, "one-shot sessions are not listed");
  });
});

describe("hub across a restart of the sidecar", () => {
  test("a session of the previous run is loadable and its history replays", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-remote-hub-restart-"));
    const file = join(dir, "store.sqlite");
    try {
      let store = openSqliteStore(file);
      let hub = await createHub({ agents: [fixture()], store, folders: folders(dir), log: () => undefined });
      const first = await open(hub, ALICE);
      const sessionId = await newSession(first, dir);
      await first.request("session/prompt", prompt(sessionId, "echo remembered"));
      await hub.shutdown();
      await store.close();

      store = openSqliteStore(file);
      hub = await createHub({ agents: [fixture()], store, folders: folders(dir), log: () => undefined });
      try {
        const second = await open(hub, ALICE);
        assert.equal(second.connection.sessionAccess(sessionId), "loadable");
        const { response } = await second.request("session/load", { sessionId, cwd: dir, mcpServers: [] });
        assert.equal(response.error, undefined, JSON.stringify(response.error));
        assert.equal(second.texts(sessionId), "remembered");
        const { response: next } = await second.request("session/prompt", prompt(sessionId, "echo again"));
        assert.deepEqual(next.result, { stopReason: "end_turn" });
        second.connection.close();
      } finally {
        await hub.shutdown();
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
