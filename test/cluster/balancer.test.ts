// Three real sidecars (each its own data folder, the same token, no shared
// store) behind HAProxy running deploy/haproxy.cfg, the file the docs show.
// Through the balancer: /readyz; the SDK client's whole flow over h2c and
// over WebSocket, with the affinity cookie keeping every request of a
// connection on the node that holds it, and bringing a reconnect back there
// for session/load; and a stopped or crashed node taken out by the health
// check while new connections keep working on the others.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AFFINITY_COOKIE } from "../../protocol/acp.ts";
import { agentPids, parentOf } from "../helpers/agent-pids.ts";
import { balancedCluster } from "../helpers/balanced-cluster.ts";
import { clusterToolsMissing, type Cluster, type ClusterNode } from "../helpers/cluster.ts";
import { createClient } from "../helpers/http-clients.ts";
import { cookieValue, MemoryAcpCookieStore, texts, type SdkClient } from "./sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const skip = clusterToolsMissing("haproxy", { redis: true });
if (skip !== undefined) process.stdout.write(`# balancer tests skipped: ${skip}\n`);

/** The node whose agent answered a `pid` prompt. */
function nodeOfAgent(cluster: Cluster, agentPid: number): ClusterNode | undefined {
  const parent = parentOf(agentPid);
  return cluster.nodes.find((node) => node.pid === parent);
}

/** The node the balancer's prefix of the affinity cookie names (n1~... is n1). */
function nodeOfCookie(cluster: Cluster, cookies: MemoryAcpCookieStore): ClusterNode {
  const value = cookieValue(cookies, AFFINITY_COOKIE);
  assert.ok(value !== undefined, "the client holds the affinity cookie");
  const match = /^(n\d)~/.exec(value);
  assert.ok(match?.[1] !== undefined, `the balancer prefixed the cookie with its node: ${value}`);
  return cluster.nodeById(match[1]);
}

describe("three sidecars behind HAProxy (deploy/haproxy.cfg)", { skip: skip ?? false }, () => {
  const balanced = balancedCluster();
  const connect = balanced.connect;

  it("/readyz and /healthz answer through the balancer over h2c and HTTP/1.1", async () => {
    for (const protocol of ["h2c", "http1"] as const) {
      const client = createClient(protocol, balanced.cluster.url);
      try {
        const ready = await client.request("GET", "/readyz");
        assert.equal(ready.status, 200, protocol);
        assert.deepEqual(JSON.parse(ready.body), { status: "ready" });
        assert.equal(ready.headers["cache-control"], "no-store");
        assert.equal((await client.request("GET", "/healthz")).status, 200);
      } finally {
        await client.close();
      }
    }
  });

  for (const transport of ["h2c", "websocket"] as const) {
    it(`the SDK client's flow over ${transport}: every request on the node of its cookie, and session/load there after a reconnect`, async () => {
      const cookies = new MemoryAcpCookieStore();
      const first = connect(transport, cookies);
      const init = await first.initialize();
      assert.equal(typeof init.connectionId, "string");
      assert.equal(init.agentCapabilities?.loadSession, true);
      const home = nodeOfCookie(balanced.cluster, cookies);
      const { sessionId } = await first.connection.agent.request(methods.agent.session.new, { cwd: home.dataDir, mcpServers: [] });
      // Several prompts: over h2c each POST is its own HTTP/2 stream, balanced on its own; only the cookie keeps them together.
      for (let i = 0; i < 3; i++) {
        const response = await first.connection.agent.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: `echo hello ${i}\nthink pondering\npid` }],
        });
        assert.equal(response.stopReason, "end_turn");
      }
      assert.deepEqual(texts(first.updates, "agent_message_chunk").filter((t) => t.startsWith("hello")), ["hello 0", "hello 1", "hello 2"]);
      assert.deepEqual(texts(first.updates, "agent_thought_chunk"), ["pondering", "pondering", "pondering"]);
      const pids = agentPids(first);
      assert.equal(new Set(pids).size, 1, "one agent answered every prompt");
      assert.equal(nodeOfAgent(balanced.cluster, pids[0] as number)?.id, home.id, "the node the cookie names ran them");

      await first.drop();
      const second = connect(transport, cookies);
      await second.initialize();
      assert.equal(nodeOfCookie(balanced.cluster, cookies).id, home.id, "the reconnect came back to the same node");
      await second.connection.agent.request(methods.agent.session.load, { sessionId, cwd: home.dataDir, mcpServers: [] });
      await eventually("the replay of the history", () => texts(second.updates, "agent_message_chunk").includes("hello 2"));
      const again = await second.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo again\npid" }] });
      assert.equal(again.stopReason, "end_turn");
      assert.ok(texts(second.updates, "agent_message_chunk").includes("again"));
      assert.equal(agentPids(second).at(-1), pids[0], "the same agent, on the same node");
      await second.close();
    });
  }

  it("new connections spread over the nodes (leastconn), each staying on its own", async () => {
    const homes = new Set<string>();
    const open: SdkClient[] = [];
    for (let i = 0; i < 3; i++) {
      const cookies = new MemoryAcpCookieStore();
      const client = connect("h2c", cookies);
      await client.initialize();
      // Its open event stream counts as a connection on its node, so the next client goes elsewhere.
      const { sessionId } = await client.connection.agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      await client.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "pid" }] });
      const node = nodeOfCookie(balanced.cluster, cookies);
      assert.equal(nodeOfAgent(balanced.cluster, agentPids(client)[0] as number)?.id, node.id);
      homes.add(node.id);
      open.push(client);
    }
    assert.ok(homes.size >= 2, `three connections on ${[...homes].join(", ")}`);
    for (const client of open) await client.close();
  });

  /** A new connection's whole flow through the balancer; returns the node that served it. */
  async function freshFlow(): Promise<ClusterNode> {
    const cookies = new MemoryAcpCookieStore();
    const client = connect("h2c", cookies);
    await client.initialize();
    const { sessionId } = await client.connection.agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
    const response = await client.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo ok\npid" }] });
    assert.equal(response.stopReason, "end_turn");
    const node = nodeOfCookie(balanced.cluster, cookies);
    assert.equal(nodeOfAgent(balanced.cluster, agentPids(client)[0] as number)?.id, node.id);
    await client.close();
    return node;
  }

  it("a node stopped with SIGTERM is taken out by the health check; new connections work on the others; back in once restarted", async () => {
    const haproxy = balanced.cluster.haproxy;
    assert.ok(haproxy !== undefined);
    // A client whose cookie names the node that goes away.
    const cookies = new MemoryAcpCookieStore();
    const stale = connect("h2c", cookies);
    await stale.initialize();
    const victim = nodeOfCookie(balanced.cluster, cookies);
    await stale.close();

    const exit = await victim.stop();
    assert.equal(exit.code, 0, "a drained node exits 0");
    await haproxy.waitForStatus({ [victim.id]: "DOWN" });
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) served.add((await freshFlow()).id);
    assert.ok(!served.has(victim.id), `served by ${[...served].join(", ")}`);
    // The cookie still names the stopped node: the balancer sends the connection elsewhere.
    const returning = connect("h2c", cookies);
    await returning.initialize();
    assert.notEqual(nodeOfCookie(balanced.cluster, cookies).id, victim.id);
    await returning.close();

    await victim.start();
    await haproxy.waitForStatus({ [victim.id]: "UP" });
  });

  it("a crashed node (SIGKILL) is taken out too, and two nodes down leave the third serving", async () => {
    const haproxy = balanced.cluster.haproxy;
    assert.ok(haproxy !== undefined);
    const [a, b, c] = balanced.cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await a.kill();
    await b.stop();
    await haproxy.waitForStatus({ [a.id]: "DOWN", [b.id]: "DOWN", [c.id]: "UP" });
    for (let i = 0; i < 3; i++) assert.equal((await freshFlow()).id, c.id);
    await Promise.all([a.start(), b.restart()]);
    await haproxy.waitForStatus({ [a.id]: "UP", [b.id]: "UP", [c.id]: "UP" });
  });
});
