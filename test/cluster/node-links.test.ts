// Links between nodes when the other node is alive (it heartbeats to Redis)
// but does not answer on the link: two real sidecars on one real Redis, the
// session's home (n1) reached by n2 through a TCP proxy that the test makes
// go silent. A link that stops answering ends within its ping deadline and
// fails the requests sent over it; a home that does not answer holds only
// its own session's messages, never the client's other sessions.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_NODE_LINK_PING_MS, DEFAULT_NODE_LINK_PING_TIMEOUT_MS } from "../../sidecar/cluster/limits.ts";
import { clusterToolsMissing, startCluster, type Cluster } from "../helpers/cluster.ts";
import { endClusterTest } from "../helpers/cluster-end.ts";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { connectSdkClient, texts, type SdkClient } from "./sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const skip = clusterToolsMissing("none", { redis: true });
if (skip !== undefined) process.stdout.write(`# node link tests skipped: ${skip}\n`);

/** A link whose peer went silent is gone this long after, at most (a ping interval, its deadline, a margin for a busy machine), in milliseconds. */
const LINK_LOST_WITHIN_MS = DEFAULT_NODE_LINK_PING_MS + DEFAULT_NODE_LINK_PING_TIMEOUT_MS + 3_000;

describe("links to a home node that stops answering", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  let proxy: TcpProxy;
  let homePort = 0;
  const clients: SdkClient[] = [];

  function connect(baseUrl: string): SdkClient {
    const client = connectSdkClient({ baseUrl, token: cluster.token, transport: "websocket" });
    clients.push(client);
    return client;
  }

  async function newSession(client: SdkClient): Promise<string> {
    const { sessionId } = await client.connection.agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    return sessionId;
  }

  function prompt(client: SdkClient, sessionId: string, text: string): Promise<{ stopReason: string }> {
    return client.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }) as Promise<{ stopReason: string }>;
  }

  /** A session whose home is n1, left detached there (its client dropped), loadable from n2. */
  async function sessionOnN1(text: string): Promise<string> {
    const owner = connect(cluster.node(0).url);
    await owner.initialize();
    const sessionId = await newSession(owner);
    assert.deepEqual(await prompt(owner, sessionId, `echo ${text}`), { stopReason: "end_turn" });
    await owner.drop();
    return sessionId;
  }

  before(async () => {
    redis = await startRedisServer();
    // n1 is reached by the other nodes through the proxy only; its heartbeat goes to Redis directly.
    proxy = await startTcpProxy(() => homePort);
    cluster = await startCluster({
      nodes: 2,
      balancer: "none",
      args: (node) => {
        if (node.index === 0) homePort = node.port;
        return [...redis.serveArgs, "--node-id", node.id, ...(node.index === 0 ? ["--advertise-url", `http://127.0.0.1:${proxy.port}`] : [])];
      },
    });
  });

  after(() =>
    endClusterTest({ cluster, redis }, async () => {
      await Promise.all(clients.map((c) => c.drop().catch(() => undefined)));
      await proxy?.close();
    }),
  );

  it("regression: a prompt relayed over a link whose peer went silent was never answered; it gets the node-gone error within the ping deadline", async () => {
    const sessionId = await sessionOnN1("made on n1");
    const client = connect(cluster.node(1).url);
    await client.initialize();
    await client.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    const turn = prompt(client, sessionId, "echo started\nslow 60000\necho never");
    const settled = turn.then(
      () => "answered",
      (error: unknown) => error,
    );
    await eventually("the turn started on n1, over the link", () => texts(client.updates, "agent_message_chunk").includes("started"));

    // The link's TCP connection stays open; nothing crosses it any more.
    proxy.freeze();
    const silentSince = Date.now();
    const outcome = await Promise.race([settled, new Promise((resolve) => setTimeout(() => resolve("still waiting"), LINK_LOST_WITHIN_MS).unref())]);
    assert.ok(outcome instanceof Error, `the prompt: ${String(outcome)} ${Date.now() - silentSince} ms after its link went silent`);
    assert.match(outcome.message, /stopped answering/);
    assert.match(cluster.node(1).output(), /link to node n1 lost: no answer to a ping/);
  });

  it("regression: a home node alive but silent held every other session's messages behind its lookup; it holds only its own session's", async () => {
    const remote = await sessionOnN1("waits for its home");
    const client = connect(cluster.node(1).url);
    await client.initialize();
    const local = await newSession(client);

    // n1 still heartbeats, so n2 takes it for the session's home; it accepts connections and answers nothing.
    proxy.silence();
    let loadSettled = false;
    const load = client.connection.agent
      .request("session/load", { sessionId: remote, cwd: process.cwd(), mcpServers: [] })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        loadSettled = true;
      });
    assert.deepEqual(await prompt(client, local, "echo not held"), { stopReason: "end_turn" });
    assert.equal(loadSettled, false, "the local session's prompt was answered only after the silent home's lookup gave up");
    assert.ok(texts(client.updates, "agent_message_chunk").includes("not held"));
    // It gives up on its own (no answer to the link's initialize, the home's heartbeat still there): an error, not a hang.
    await load;
  });
});
