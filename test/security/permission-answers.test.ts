// Who may answer what the server asks a client. A permission request counts
// only the answer of a connection it was offered to that still follows the
// session (so of the session's person); request ids are random; a request an
// agent forwards to a client is answered by that client alone; the editor is
// asked only for its owner's sessions. The real sidecar (serve(), the
// fixture agent as a child process) with the server's person's token and
// bob's, clients on real WebSockets, and the editor on the control protocol
// (runControlled, vscode-jsonrpc framing on in-memory streams).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, test } from "node:test";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { Acp } from "../../protocol/acp.ts";
import { ControlHostRequest, ControlNotification, ControlRequest, type PermissionInfo, type ServerFailure, type ServerInfo } from "../../protocol/control.ts";
import { runControlled } from "../../sidecar/control/control-server.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { serveFixture, FIXTURE_AGENT, type ServedFixture } from "../helpers/sidecar-server.ts";
import { AcpPeer, type Message } from "../helpers/acp-peer.ts";

const ALICE_TOKEN = "alice-secret-0123456789";
const BOB_TOKEN = "bob-secret-0123456789";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const selected = (optionId: string) => ({ outcome: { outcome: "selected" as const, optionId } });
const promptParams = (sessionId: string, text: string) => ({ sessionId, prompt: [{ type: "text", text }] });
const isPermissionRequest = (m: Message) => m["method"] === Acp.client.session.requestPermission && "id" in m;

async function newSession(peer: AcpPeer, cwd: string): Promise<string> {
  const response = await peer.call(Acp.agent.session.new, { cwd, mcpServers: [] });
  assert.equal(response["error"], undefined, JSON.stringify(response["error"]));
  return (response["result"] as { sessionId: string }).sessionId;
}

/** Sends a prompt; resolves with its response once the turn ends. */
function startPrompt(peer: AcpPeer, sessionId: string, text: string): Promise<Message> {
  return peer.call(Acp.agent.session.prompt, promptParams(sessionId, text));
}

/** A new session of `peer`'s in `cwd` whose turn asks permission for `title`: its id, the turn, and the request as `peer` got it (`what` names it). */
async function askedForPermission(peer: AcpPeer, cwd: string, title: string, what: string): Promise<{ sessionId: string; turn: Promise<Message>; asked: Message }> {
  const sessionId = await newSession(peer, cwd);
  const turn = startPrompt(peer, sessionId, `permission ${title}`);
  const asked = await peer.waitFor(isPermissionRequest, what);
  return { sessionId, turn, asked };
}

/** Everything `peer` sent before this is handled: the server answers in order on one connection. */
async function settled(peer: AcpPeer): Promise<void> {
  await peer.call(Acp.agent.session.list, {});
}

describe("permission answers and forwarded requests: only from the connection asked", () => {
  let served: ServedFixture;
  const peers: AcpPeer[] = [];
  const open = async (token: string): Promise<AcpPeer> => {
    const peer = await AcpPeer.open(served.server.url, token);
    peers.push(peer);
    return peer;
  };

  before(async () => {
    served = await serveFixture({ tokens: [ALICE_TOKEN, { token: BOB_TOKEN, label: "bob" }] });
  });

  after(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await served?.close();
  });

  test("bob cannot answer alice's permission request", async () => {
    const alice = await open(ALICE_TOKEN);
    const bob = await open(BOB_TOKEN);
    const { sessionId, turn, asked } = await askedForPermission(alice, tmpdir(), "Deploy to production", "alice's permission request");

    // bob, following nothing, answers alice's request by its id (as if he had guessed it).
    bob.respond(asked["id"], selected("allow_once"));
    await settled(bob);
    assert.equal(
      alice.received.some((m) => m["method"] === Acp.protocol.cancelRequest),
      false,
      "alice's request is still hers to answer: nothing withdrew it",
    );

    alice.respond(asked["id"], selected("reject_once"));
    assert.deepEqual((await turn)["result"], { stopReason: "end_turn" });
    assert.match(alice.agentText(sessionId), /outcome: selected reject_once/, "alice's answer is the one the agent got");
    assert.doesNotMatch(alice.agentText(sessionId), /allow_once/);
  });

  test("a connection of the same person that does not follow the session cannot answer its permission request", async () => {
    const follower = await open(ALICE_TOKEN);
    const bystander = await open(ALICE_TOKEN);
    const { sessionId, turn, asked } = await askedForPermission(follower, tmpdir(), "Delete the branch", "the permission request");

    bystander.respond(asked["id"], selected("allow_once"));
    await settled(bystander);
    follower.respond(asked["id"], selected("reject_once"));
    assert.deepEqual((await turn)["result"], { stopReason: "end_turn" });
    assert.match(follower.agentText(sessionId), /outcome: selected reject_once/);
  });

  test("a connection that stopped following the session cannot answer the permission request it was offered", async () => {
    const first = await open(ALICE_TOKEN);
    const second = await open(ALICE_TOKEN);
    const { sessionId, turn, asked } = await askedForPermission(first, tmpdir(), "Rewrite history", "the permission request");

    // The session moves to the second connection (a reconnecting client): the request is offered there.
    const loaded = await second.call(Acp.agent.session.load, { sessionId, cwd: tmpdir(), mcpServers: [] });
    assert.equal(loaded["error"], undefined, JSON.stringify(loaded["error"]));
    const reoffered = await second.waitFor(isPermissionRequest, "the request offered again");
    assert.equal(reoffered["id"], asked["id"]);

    first.respond(asked["id"], selected("allow_once"));
    await settled(first);
    second.respond(asked["id"], selected("reject_once"));
    assert.deepEqual((await turn)["result"], { stopReason: "end_turn" });
    assert.match(second.agentText(sessionId), /outcome: selected reject_once/);
    assert.doesNotMatch(second.agentText(sessionId), /allow_once/);
  });

  test("permission request ids are random, not a count another client could guess", async () => {
    const alice = await open(ALICE_TOKEN);
    const sessionId = await newSession(alice, tmpdir());
    const ids: unknown[] = [];
    for (const title of ["First", "Second"]) {
      const turn = startPrompt(alice, sessionId, `permission ${title}`);
      const asked = await alice.waitFor((m) => isPermissionRequest(m) && !ids.includes(m["id"]), `permission request ${title}`);
      ids.push(asked["id"]);
      alice.respond(asked["id"], selected("reject_once"));
      await turn;
    }
    for (const id of ids) assert.match(String(id), UUID, `${String(id)} carries a random UUID`);
    assert.notEqual(ids[0], ids[1]);
  });

  test("a request an agent forwards to alice's client is answered by that client alone, under a random id", async () => {
    const alice = await open(ALICE_TOKEN);
    const bob = await open(BOB_TOKEN);
    const sessionId = await newSession(alice, tmpdir());
    // The fixture names sessions uniquely: its id for the session is the public one.
    const turn = startPrompt(alice, sessionId, `request _acme/confirm ${JSON.stringify({ sessionId, what: "deploy" })}`);
    const forwarded = await alice.waitFor((m) => m["method"] === "_acme/confirm" && "id" in m, "the forwarded request");
    assert.match(String(forwarded["id"]), UUID);

    bob.respond(forwarded["id"], { confirmed: "by bob" });
    await settled(bob);
    alice.respond(forwarded["id"], { confirmed: "by alice" });
    assert.deepEqual((await turn)["result"], { stopReason: "end_turn" });
    assert.match(alice.agentText(sessionId), /result: \{"confirmed":"by alice"\}/);
  });
});

describe("the editor answers permission requests of its owner's sessions only", () => {
  let dataDir: string;
  let bobDir: string;
  let editor: MessageConnection;
  let exited: Promise<number>;
  let url: string;
  /** The permission requests the editor was asked, in order; it allows each at once. */
  const editorAsked: PermissionInfo[] = [];
  const peers: AcpPeer[] = [];
  const open = async (token: string): Promise<AcpPeer> => {
    const peer = await AcpPeer.open(url, token);
    peers.push(peer);
    return peer;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-remote-editor-permissions-"));
    bobDir = mkdtempSync(join(tmpdir(), "acp-remote-bob-"));
    const toSidecar = new PassThrough();
    const fromSidecar = new PassThrough();
    exited = runControlled(
      {
        host: "127.0.0.1",
        port: 0,
        agents: [{ name: "fixture", command: process.execPath, args: [FIXTURE_AGENT] }],
        tokens: [ALICE_TOKEN, { token: BOB_TOKEN, label: "bob" }],
        roots: [{ person: "bob", dir: bobDir }],
        auth: true,
        dataDir,
        allowedOrigins: [],
        log: () => {},
      },
      { input: toSidecar, output: fromSidecar },
    );
    editor = createMessageConnection(new StreamMessageReader(fromSidecar), new StreamMessageWriter(toSidecar));
    const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
      editor.onNotification(ControlNotification.serverStarted, resolve);
      editor.onNotification(ControlNotification.serverFailed, resolve);
    });
    editor.onRequest(ControlHostRequest.requestPermission, (info: PermissionInfo) => {
      editorAsked.push(info);
      return selected("allow_once");
    });
    editor.listen();
    await editor.sendRequest(Lsp.initialize, {
      processId: process.pid,
      initializationOptions: { host: { fs: false, terminal: false }, permissionPolicy: "both" },
    });
    await editor.sendNotification(Lsp.initialized, {});
    const info = await started;
    assert.ok("url" in info, JSON.stringify(info));
    url = info.url;
  });

  after(async () => {
    await Promise.all(peers.map((p) => p.close()));
    if (editor) {
      await editor.sendRequest(Lsp.shutdown).catch(() => undefined);
      await editor.sendNotification(Lsp.exit).catch(() => undefined);
      await exited;
      editor.dispose();
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bobDir, { recursive: true, force: true });
  });

  test("the editor is not asked to answer another person's permission request", async () => {
    const bob = await open(BOB_TOKEN);
    const { sessionId: bobSession, turn: bobTurn, asked } = await askedForPermission(bob, bobDir, "Read bob's mail", "bob's permission request");
    bob.respond(asked["id"], selected("reject_once"));
    assert.deepEqual((await bobTurn)["result"], { stopReason: "end_turn" });
    assert.match(bob.agentText(bobSession), /outcome: selected reject_once/, "bob's own answer, not the editor's");

    // The server's person's session still goes to the editor, which allows it:
    // its request reaches the editor after bob's would have, on the same channel.
    const alice = await open(ALICE_TOKEN);
    const aliceSession = await newSession(alice, tmpdir());
    assert.deepEqual((await startPrompt(alice, aliceSession, "permission Format the disk"))["result"], { stopReason: "end_turn" });
    assert.match(alice.agentText(aliceSession), /outcome: selected allow_once/, "the editor answered the owner's request");
    assert.deepEqual(editorAsked.map((info) => info.sessionId), [aliceSession]);
  });

  test("with the policy editor, another person's permission request still goes to that person", async () => {
    await editor.sendRequest(ControlRequest.setPermissionPolicy, { policy: "editor" });
    try {
      const bob = await open(BOB_TOKEN);
      const { sessionId, turn, asked } = await askedForPermission(bob, bobDir, "Push to main", "bob's permission request");
      bob.respond(asked["id"], selected("reject_once"));
      assert.deepEqual((await turn)["result"], { stopReason: "end_turn" });
      assert.match(bob.agentText(sessionId), /outcome: selected reject_once/);
      assert.equal(editorAsked.some((info) => info.sessionId === sessionId), false);
    } finally {
      await editor.sendRequest(ControlRequest.setPermissionPolicy, { policy: "both" });
    }
  });
});
