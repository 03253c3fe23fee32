// Three real sidecars behind nginx running deploy/nginx.conf (the file the
// docs show, its addresses written in as envsubst would): /readyz, and the SDK
// client's flow over Streamable HTTP on HTTP/1.1 and over WebSocket, with
// nginx's affinity cookie keeping a connection, and a reconnect, on one node;
// a stopped node is passed over for the others.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { agentPids, parentOf } from "../helpers/agent-pids.ts";
import { balancedCluster } from "../helpers/balanced-cluster.ts";
import { clusterToolsMissing, type ClusterNode } from "../helpers/cluster.ts";
import { createClient } from "../helpers/http-clients.ts";
import { cookieValue, MemoryAcpCookieStore, texts } from "./sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const skip = clusterToolsMissing("nginx");
if (skip !== undefined) process.stdout.write(`# nginx tests skipped: ${skip}\n`);

/** The cookie deploy/nginx.conf sets, naming the node that answered. */
const NODE_COOKIE = "acp_node";

describe("three sidecars behind nginx (deploy/nginx.conf)", { skip: skip ?? false }, () => {
  const balanced = balancedCluster({ balancer: "nginx" });
  const connect = balanced.connect;

  function nodeOfCookie(cookies: MemoryAcpCookieStore): ClusterNode {
    const id = cookieValue(cookies, NODE_COOKIE);
    assert.ok(id !== undefined && id !== "", "nginx named the node in its cookie");
    return balanced.cluster.nodeById(id);
  }

  it("/readyz answers through nginx", async () => {
    const client = createClient("http1", balanced.cluster.url);
    try {
      const ready = await client.request("GET", "/readyz");
      assert.equal(ready.status, 200);
      assert.deepEqual(JSON.parse(ready.body), { status: "ready" });
    } finally {
      await client.close();
    }
  });

  for (const transport of ["http1", "websocket"] as const) {
    it(`the SDK client's flow over ${transport}: on the node of its cookie, and session/load there after a reconnect`, async () => {
      const cookies = new MemoryAcpCookieStore();
      const first = connect(transport, cookies);
      await first.initialize();
      const home = nodeOfCookie(cookies);
      const { sessionId } = await first.connection.agent.request(methods.agent.session.new, { cwd: home.dataDir, mcpServers: [] });
      for (let i = 0; i < 3; i++) {
        const response = await first.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `echo hello ${i}\npid` }] });
        assert.equal(response.stopReason, "end_turn");
      }
      assert.deepEqual(texts(first.updates, "agent_message_chunk").filter((t) => t.startsWith("hello")), ["hello 0", "hello 1", "hello 2"]);
      const pids = agentPids(first);
      assert.equal(new Set(pids).size, 1);
      assert.equal(parentOf(pids[0] as number), home.pid, "the node the cookie names ran every prompt");

      await first.drop();
      const second = connect(transport, cookies);
      await second.initialize();
      assert.equal(nodeOfCookie(cookies).id, home.id);
      await second.connection.agent.request(methods.agent.session.load, { sessionId, cwd: home.dataDir, mcpServers: [] });
      // The journal joins consecutive chunks of a turn.
      await eventually("the replay of the history", () => texts(second.updates, "agent_message_chunk").some((t) => t.includes("hello 2")));
      await second.close();
    });
  }

  it("a stopped node is passed over: connections whose cookie names it, and new ones, work on the others", async () => {
    const cookies = new MemoryAcpCookieStore();
    const stale = connect("http1", cookies);
    await stale.initialize();
    const victim = nodeOfCookie(cookies);
    await stale.close();
    assert.equal((await victim.stop()).code, 0);
    for (let i = 0; i < 4; i++) {
      const fresh = new MemoryAcpCookieStore();
      const client = connect("http1", i === 0 ? cookies : fresh);
      await client.initialize();
      const { sessionId } = await client.connection.agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      const response = await client.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "pid" }] });
      assert.equal(response.stopReason, "end_turn");
      const node = nodeOfCookie(i === 0 ? cookies : fresh);
      assert.notEqual(node.id, victim.id);
      assert.equal(parentOf(agentPids(client)[0] as number), node.pid);
      await client.close();
    }
    await victim.start();
  });
});
