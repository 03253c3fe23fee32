// Public session ids on a shared store. Agents commonly number their sessions
// (session-1, session-2, …), every process alike, so two nodes' agents hand
// out the same ids: the public id must still be unique across the nodes, a
// person's record and journal never another's, and a session taken over by a
// node whose agent already has a session of that agent-side id must not be
// bound to it. Two real `serve` nodes on one real redis-server, the fixture
// agent numbering its sessions, the server's person (alice) and bob each with
// a token, clients of the ACP SDK over WebSocket, each connected straight to
// one node. A permission request still reaches, and is answered by, the
// client following a session through another node.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { clusterToolsMissing, startCluster, type Cluster } from "../helpers/cluster.ts";
import { endClusterTest } from "../helpers/cluster-end.ts";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { connectSdkClient, texts, type SdkClient } from "../cluster/sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const skip = clusterToolsMissing("none", { redis: true });
if (skip !== undefined) process.stdout.write(`# session id tests skipped: ${skip}\n`);

const ALICE_TOKEN = "alice-secret-0123456789";
const BOB_TOKEN = "bob-secret-0123456789";

describe("two nodes on one store whose agents number their sessions alike", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  let bobDir: string;
  /** A reader of the shared store, to see the records as stored. */
  let peek: SharedStore;
  const clients: SdkClient[] = [];

  async function connect(baseUrl: string, token: string): Promise<SdkClient> {
    const client = connectSdkClient({ baseUrl, token, transport: "websocket" });
    clients.push(client);
    await client.initialize();
    return client;
  }

  async function newSession(client: SdkClient, cwd: string): Promise<string> {
    return (await client.connection.agent.request("session/new", { cwd, mcpServers: [] })).sessionId;
  }

  async function prompt(client: SdkClient, sessionId: string, text: string): Promise<void> {
    const result = await client.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    assert.equal(result.stopReason, "end_turn");
  }

  async function listed(client: SdkClient): Promise<string[]> {
    return ((await client.connection.agent.request("session/list", {})) as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId);
  }

  const said = (client: SdkClient, sessionId: string): string =>
    texts(client.updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk").join("\n");

  before(async () => {
    redis = await startRedisServer();
    bobDir = mkdtempSync(join(tmpdir(), "acp-remote-bob-"));
    cluster = await startCluster({
      nodes: 2,
      balancer: "none",
      token: ALICE_TOKEN,
      args: (node) => [...redis.serveArgs, "--node-id", node.id, "--token", `bob:${BOB_TOKEN}`, "--root", `bob=${bobDir}`],
      env: { FIXTURE_AGENT_NUMBERED_SESSIONS: "1" },
    });
    peek = await openRedisStore(redis.url, { nodeId: `peek-${process.pid}`, ca: redis.ca });
  });

  after(async () => {
    await endClusterTest({ cluster, redis, peek }, () => Promise.all(clients.map((c) => c.close().catch(() => undefined))));
    if (bobDir) rmSync(bobDir, { recursive: true, force: true });
  });

  it("two nodes whose agents number sessions alike give distinct public ids; neither person gets the other's session or journal", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const alice = await connect(n1.url, ALICE_TOKEN);
    const aliceSession = await newSession(alice, tmpdir());
    assert.equal(aliceSession, "session-1", "the agent's own id, free on the store, is the public id");
    await prompt(alice, aliceSession, "echo alice's launch codes");

    const bob = await connect(n2.url, BOB_TOKEN);
    const bobSession = await newSession(bob, bobDir);
    assert.notEqual(bobSession, aliceSession, "n2's agent said session-1 too: the store gave bob another id");
    await prompt(bob, bobSession, "echo bob's shopping list");

    const aliceRecord = await peek.sessions.get(aliceSession);
    const bobRecord = await peek.sessions.get(bobSession);
    assert.equal(aliceRecord?.ownerId, "owner", "alice's record is hers still");
    assert.equal(aliceRecord?.agentSessionId, "session-1");
    assert.equal(bobRecord?.ownerId, "person:bob");
    assert.equal(bobRecord?.agentSessionId, "session-1", "bob's agent-side id is kept beside his public id");
    assert.deepEqual(await peek.sessions.home(aliceSession), n1.id);
    assert.deepEqual(await peek.sessions.home(bobSession), n2.id);

    assert.deepEqual(await listed(bob), [bobSession], "bob lists his session alone");
    await assert.rejects(bob.connection.agent.request("session/load", { sessionId: aliceSession, cwd: bobDir, mcpServers: [] }), "alice's id is unknown to bob");
    const bobAgain = await connect(n2.url, BOB_TOKEN);
    await bobAgain.connection.agent.request("session/load", { sessionId: bobSession, cwd: bobDir, mcpServers: [] });
    await eventually("bob's replay", () => said(bobAgain, bobSession).includes("bob's shopping list"));
    assert.doesNotMatch(said(bobAgain, bobSession), /launch codes/, "bob's journal is his");

    // Alice, on the node where bob's session runs, reaches hers on n1 with its own journal.
    const aliceOnN2 = await connect(n2.url, ALICE_TOKEN);
    assert.deepEqual(await listed(aliceOnN2), [aliceSession]);
    await aliceOnN2.connection.agent.request("session/load", { sessionId: aliceSession, cwd: tmpdir(), mcpServers: [] });
    await eventually("alice's replay", () => said(aliceOnN2, aliceSession).includes("alice's launch codes"));
    assert.doesNotMatch(said(aliceOnN2, aliceSession), /shopping list/);
    await prompt(aliceOnN2, aliceSession, "echo alice from n2");
    assert.match(said(aliceOnN2, aliceSession), /alice from n2/);
    assert.doesNotMatch(said(bob, bobSession), /alice/, "nothing of alice's reaches bob");
  });

  it("a session taken over by a node whose agent has a session of the same agent-side id gets an agent session of its own", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const alice = await connect(n1.url, ALICE_TOKEN);
    const bob = await connect(n2.url, BOB_TOKEN);
    const agentId = async (sessionId: string): Promise<string> => (await peek.sessions.get(sessionId))?.agentSessionId ?? "";
    const count = async (sessionId: string): Promise<number> => Number((await agentId(sessionId)).replace("session-", ""));
    // New sessions on the node whose agent counted fewer, until both agents said the same id.
    let aliceSession = await newSession(alice, tmpdir());
    let bobSession = await newSession(bob, bobDir);
    for (let i = 0; i < 5 && (await agentId(aliceSession)) !== (await agentId(bobSession)); i++) {
      if ((await count(aliceSession)) < (await count(bobSession))) aliceSession = await newSession(alice, tmpdir());
      else bobSession = await newSession(bob, bobDir);
    }
    const agentIds = [await agentId(aliceSession), await agentId(bobSession)];
    assert.equal(agentIds[0], agentIds[1], `both agents numbered a session alike: ${agentIds}`);
    await prompt(alice, aliceSession, "echo alice before the hand-over");

    // n1 stops and hands its sessions over: alice's is taken over by n2.
    assert.equal((await n1.stop()).code, 0);
    try {
      const aliceOnN2 = await connect(n2.url, ALICE_TOKEN);
      await aliceOnN2.connection.agent.request("session/load", { sessionId: aliceSession, cwd: tmpdir(), mcpServers: [] });
      await prompt(aliceOnN2, aliceSession, "echo alice after the hand-over");
      await prompt(bob, bobSession, "echo bob's private note");

      assert.match(said(aliceOnN2, aliceSession), /alice after the hand-over/);
      assert.doesNotMatch(said(aliceOnN2, aliceSession), /private note/, "bob's turn does not reach alice's session");
      assert.match(said(bob, bobSession), /bob's private note/, "bob's turn is his");
      assert.doesNotMatch(said(bob, bobSession), /alice/);
      assert.notEqual((await peek.sessions.get(aliceSession))?.agentSessionId, agentIds[1], "alice's session runs in an agent session of its own on n2");
    } finally {
      await n1.start();
    }
  });

  it("a permission request of a session that runs on another node is answered through the link by the client following it", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const alice = await connect(n1.url, ALICE_TOKEN);
    const sessionId = await newSession(alice, tmpdir());
    const aliceOnN2 = await connect(n2.url, ALICE_TOKEN);
    await aliceOnN2.connection.agent.request("session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
    await prompt(aliceOnN2, sessionId, "permission Ship the release");
    assert.deepEqual(aliceOnN2.permissions, ["Ship the release"], "asked on n2, for the agent on n1");
    assert.match(said(aliceOnN2, sessionId), /outcome: selected allow_once/, "her answer went back over the link and counted");
  });
});
