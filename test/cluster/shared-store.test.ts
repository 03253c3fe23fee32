// Three real sidecars on one real Redis (`--store redis://…`), behind HAProxy
// running deploy/haproxy.cfg. Any node serves any request: a session made on
// one node is listed, loaded and prompted through another; a node killed
// with SIGKILL mid-turn or mid-job leaves its session and its deferred job to
// the others; a result is taken exactly once however many nodes are asked;
// Redis restarted from its AOF keeps what was acknowledged; Redis stopped
// makes /acp and /v1 answer 503 with Retry-After, and they recover by
// themselves when it is back. A node stopped with SIGTERM hands its sessions
// over at once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { clusterToolsMissing, startCluster, type Cluster } from "../helpers/cluster.ts";
import { endClusterTest } from "../helpers/cluster-end.ts";
import { parentOf } from "../helpers/agent-pids.ts";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { openRedisStore } from "../../sidecar/store/redis/index.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { connectSdkClient, texts, type SdkClient, type SdkTransport } from "./sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const skip = clusterToolsMissing("haproxy", { redis: true });
if (skip !== undefined) process.stdout.write(`# shared store cluster tests skipped: ${skip}\n`);

const MODEL = "fixture";

describe("three sidecars on one Redis behind HAProxy", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  /** A reader of the shared store, for what no endpoint shows without changing it (a job's state). */
  let peek: SharedStore;
  const clients: SdkClient[] = [];

  function connect(baseUrl: string, transport: SdkTransport = "websocket"): SdkClient {
    const client = connectSdkClient({ baseUrl, token: cluster.token, transport });
    clients.push(client);
    return client;
  }

  function openai(baseUrl: string): OpenAI {
    return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: cluster.token, maxRetries: 0 });
  }

  async function newSession(client: SdkClient): Promise<string> {
    await client.initialize();
    const { sessionId } = await client.connection.agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    return sessionId;
  }

  function prompt(client: SdkClient, sessionId: string, text: string): Promise<{ stopReason: string }> {
    return client.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }) as Promise<{ stopReason: string }>;
  }

  before(async () => {
    redis = await startRedisServer();
    cluster = await startCluster({ args: (node) => [...redis.serveArgs, "--node-id", node.id] });
    peek = await openRedisStore(redis.url, { nodeId: `peek-${process.pid}`, ca: redis.ca });
  });

  after(() => endClusterTest({ cluster, redis, peek }, () => Promise.all(clients.map((c) => c.close().catch(() => undefined)))));

  it("a session made on one node is listed, loaded with its history and prompted through another", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const first = connect(n1.url, "h2c");
    const sessionId = await newSession(first);
    assert.deepEqual(await prompt(first, sessionId, "echo made on n1"), { stopReason: "end_turn" });
    await first.drop();

    const second = connect(n2.url, "websocket");
    await second.initialize();
    const listed = (await second.connection.agent.request("session/list", {})) as { sessions: Array<{ sessionId: string }> };
    assert.ok(listed.sessions.some((s) => s.sessionId === sessionId), "n2 lists n1's session");
    await second.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    assert.ok(texts(second.updates, "agent_message_chunk").includes("made on n1"), "the journal replays on n2");
    assert.deepEqual(await prompt(second, sessionId, "pid"), { stopReason: "end_turn" });
    // The agent that answered is n1's child, the session's home: n2 reached it over its link.
    const pid = Number(texts(second.updates, "agent_message_chunk").find((t) => t.startsWith("pid: "))?.slice("pid: ".length));
    assert.equal(parentOf(pid), n1.pid, "the turn ran on the session's home node");
  });

  it("drop and resume through the balancer: the reconnect may land on any node and finds the session", async () => {
    const client = connect(cluster.url, "h2c");
    const sessionId = await newSession(client);
    await prompt(client, sessionId, "echo before the drop");
    await client.drop();
    // A fresh cookie store: no affinity, the balancer picks any node.
    for (const transport of ["websocket", "h2c", "http1"] as const) {
      const again = connect(cluster.url, transport);
      await again.initialize();
      await again.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
      await eventually(`the replay over ${transport}`, () => texts(again.updates, "agent_message_chunk").includes("before the drop"));
      assert.deepEqual(await prompt(again, sessionId, `echo after over ${transport}`), { stopReason: "end_turn" });
      await again.drop();
    }
  });

  it("kill -9 of a node mid-turn: its session is taken over by another node, and session/load replays the journal", async () => {
    const victim = cluster.node(2);
    const client = connect(victim.url, "websocket");
    const sessionId = await newSession(client);
    await prompt(client, sessionId, "echo journaled before");
    const turn = prompt(client, sessionId, "echo started\nslow 30000\necho never").catch((error: unknown) => error);
    await eventually("the turn started", () => texts(client.updates, "agent_message_chunk").includes("started"));
    await victim.kill();
    assert.ok((await turn) instanceof Error, "the turn in flight fails with its node");

    const survivor = connect(cluster.node(0).url, "h2c");
    await survivor.initialize();
    const started = Date.now();
    await survivor.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    // Over HTTP the replay comes on the session stream, the answer on the connection stream: either may come first.
    await eventually("the journal replayed", () => texts(survivor.updates, "agent_message_chunk").includes("journaled before"));
    assert.ok(Date.now() - started < 10_000, "taken over within the node TTL");
    assert.deepEqual(await prompt(survivor, sessionId, "echo alive again"), { stopReason: "end_turn" });
    await victim.start();
  });

  it("a node stopped with SIGTERM hands its sessions over: another node serves them at once, without waiting for a heartbeat to expire", async () => {
    const leaving = cluster.node(1);
    const client = connect(leaving.url, "websocket");
    const sessionId = await newSession(client);
    await prompt(client, sessionId, "echo handed over");
    const exit = await leaving.stop();
    assert.equal(exit.code, 0, "drained and stopped cleanly");

    const other = connect(cluster.node(0).url, "h2c");
    await other.initialize();
    const started = Date.now();
    await other.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    assert.ok(Date.now() - started < 2_000, `loaded in ${Date.now() - started} ms: the home was released, not waited out`);
    await eventually("the replay", () => texts(other.updates, "agent_message_chunk").includes("handed over"));
    assert.deepEqual(await prompt(other, sessionId, "echo served elsewhere"), { stopReason: "end_turn" });
    await leaving.start();
  });

  it("a deferred job submitted on one node is polled on another; kill -9 of its node mid-job leaves it to the others, answered once", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const submit = await openai(n1.url).chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "slow 3000\necho deferred done" }],
      deferred: true,
    } as never);
    const id = (submit as unknown as { request_id: string }).request_id;
    assert.match(id, /^[0-9a-f-]{36}$/);
    // Running on n1 now (it submitted and claimed it): n2 says 202.
    const pending = await fetch(`${n2.url}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${cluster.token}` } });
    assert.equal(pending.status, 202);
    await n1.kill();

    let body: { choices: Array<{ message: { content: string } }> } | undefined;
    await eventually(
      "the job rerun on a live node",
      async () => {
        const res = await fetch(`${n2.url}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${cluster.token}` } });
        if (res.status === 202) return false;
        assert.equal(res.status, 200, await res.clone().text());
        body = (await res.json()) as typeof body;
        return true;
      },
      30_000,
    );
    assert.match(body?.choices[0]?.message.content ?? "", /deferred done/);
    const again = await fetch(`${cluster.node(2).url}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${cluster.token}` } });
    assert.equal(again.status, 404, "retrieved once: gone on every node");
    await n1.start();
  });

  it("regression: a job cancelled through another node kept running on its node until it ended; it now stops there at once", async () => {
    const [n1, n2] = [cluster.node(0), cluster.node(1)];
    const headers = { authorization: `Bearer ${cluster.token}`, "content-type": "application/json" };
    // A job stopped on its node is a session/cancel to its agent, which the fixture agent logs.
    const cancels = () => cluster.nodes.reduce((n, node) => n + node.output().split("session/cancel ").length - 1, 0);
    const before = cancels();
    const submitted = await fetch(`${n1.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "slow 60000\necho too late" }], deferred: true }),
    });
    const { request_id: id } = (await submitted.json()) as { request_id: string };
    // Running, and its prompt at the agent: a cancel that came sooner would stop it before any session/cancel.
    await eventually("the job's prompt at an agent", () => cluster.nodes.some((node) => node.output().includes("too late")));
    assert.equal(await jobState(id), "running");
    const running = cluster.nodes.find((node) => node.output().includes("too late"));
    const other = running === n2 ? n1 : n2;
    const cancelled = await fetch(`${other.url}/v1/chat/deferred-completion/${id}`, { method: "DELETE", headers });
    assert.equal(cancelled.status, 200);
    // Without the node that runs it being told, the turn would go on for its whole minute.
    await eventually("the cancelled turn stopped on its node", () => cancels() > before, 10_000);
  });

  it("50 concurrent GETs of one finished result, spread over the nodes and the balancer: exactly one 200", async () => {
    const submit = await openai(cluster.url).chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "echo once" }], deferred: true } as never);
    const id = (submit as unknown as { request_id: string }).request_id;
    await eventually("the job done", async () => (await jobState(id)) === "done");
    const urls = [cluster.url, ...cluster.nodes.map((n) => n.url)];
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${urls[i % urls.length]}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${cluster.token}` } }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 404).length, 49);
  });

  it("Redis restarted from its AOF loses nothing acknowledged: sessions replay, results are still there", async () => {
    const client = connect(cluster.node(1).url, "websocket");
    const sessionId = await newSession(client);
    await prompt(client, sessionId, "echo kept across a Redis restart");
    const submit = await openai(cluster.node(1).url).chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "echo kept result" }], deferred: true } as never);
    const id = (submit as unknown as { request_id: string }).request_id;
    await eventually("the job done", async () => (await jobState(id)) === "done");
    await client.drop();

    await redis.kill();
    await redis.start();
    await eventually("the nodes ready again", async () => (await Promise.all(cluster.nodes.map((n) => status(`${n.url}/readyz`)))).every((s) => s === 200));

    const reader = connect(cluster.node(0).url, "h2c");
    await reader.initialize();
    await reader.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    await eventually("the replay", () => texts(reader.updates, "agent_message_chunk").includes("kept across a Redis restart"));
    const result = await fetch(`${cluster.node(2).url}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${cluster.token}` } });
    assert.equal(result.status, 200);
  });

  it("Redis stopped: /acp and /v1 answer 503 with Retry-After, /readyz says why, and all recover by themselves", async () => {
    const node = cluster.node(0);
    await redis.stop();
    await eventually("the node sees the store gone", async () => (await status(`${node.url}/readyz`)) === 503);
    const ready = await fetch(`${node.url}/readyz`);
    assert.match(await ready.text(), /store unreachable/);
    const acp = await fetch(`${node.url}/acp`, {
      method: "POST",
      headers: { authorization: `Bearer ${cluster.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }),
    });
    assert.equal(acp.status, 503);
    assert.ok(Number(acp.headers.get("retry-after")) >= 1);
    const v1 = await fetch(`${node.url}/v1/chat/deferred-completion/anything`, { headers: { authorization: `Bearer ${cluster.token}` } });
    assert.equal(v1.status, 503);
    assert.ok(Number(v1.headers.get("retry-after")) >= 1);
    assert.equal(((await v1.json()) as { error: { code: string } }).error.code, "store_unavailable");

    await redis.start();
    await eventually("ready again", async () => (await status(`${node.url}/readyz`)) === 200);
    const client = connect(node.url, "h2c");
    const sessionId = await newSession(client);
    assert.deepEqual(await prompt(client, sessionId, "echo back"), { stopReason: "end_turn" });
  });

  /** The job's state without taking it, read from the store every node shares. */
  function jobState(id: string): Promise<string | undefined> {
    return peek.jobs({ clock: Date.now, ttlMs: 24 * 60 * 60_000 }).state("owner", id);
  }
});

async function status(url: string): Promise<number> {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
