// Web Push on several nodes of one shared store (a real redis-server, two
// `serve`s in this process): both nodes sign with the one VAPID key pair kept
// in the store, a device that subscribed through one node is notified by the
// node that runs the session, a page that shows the session through another
// node keeps it quiet, and an answer that reaches the other node (a balancer
// sends it anywhere) is passed on to the node whose request it answers, once.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acp, AcpExt } from "../../protocol/acp.ts";
import { NOTIFY_ANSWER_PATH, type NotificationPayload } from "../../protocol/notify.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { capabilityNode } from "../../sidecar/notify/answer-capabilities.ts";
import { AcpPeer } from "../helpers/acp-peer.ts";
import { eventually } from "../helpers/eventually.ts";
import { startPushService, type PushService } from "../helpers/push-service.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";

const MAIN = "notify-cluster-main-token-0123456789";
const NODE_SECRET = "notify-cluster-node-secret-0123456789abcdef";
const TEST_TIMEOUT_MS = 90_000;
const installed = redisServerPath() !== undefined;

type Message = Record<string, unknown>;

/** How long a test waits for what comes by itself (an offered request, a device accepted), in milliseconds. */
const WAIT_MS = 20_000;

const webPushKey = (peer: AcpPeer): string | undefined =>
  (((peer.initialized?.["_meta"] as Message)[AcpExt.metaKey] as Message)[AcpExt.webPush] as { applicationServerKey: string } | undefined)?.applicationServerKey;

describe("Web Push on a shared store", { skip: installed ? false : "redis-server is not installed" }, () => {
  let redis: RedisServer;
  let push: PushService;
  const folders: string[] = [];
  const nodes: RunningServer[] = [];
  const peers: AcpPeer[] = [];
  let a: RunningServer;
  let b: RunningServer;

  async function node(id: string): Promise<RunningServer> {
    const dataDir = mkdtempSync(join(tmpdir(), `acp-remote-notify-${id}-`));
    folders.push(dataDir);
    const server = await serveFixtureAgent({
      tokens: [MAIN],
      dataDir,
      store: redis.url,
      storeCa: redis.ca,
      nodeId: id,
      nodeSecret: NODE_SECRET,
      notify: { pushAgent: new Agent({ ca: push.ca }) },
    });
    nodes.push(server);
    return server;
  }

  const open = async (server: RunningServer, token: string): Promise<AcpPeer> => {
    const peer = await AcpPeer.open(server.url, token);
    peers.push(peer);
    return peer;
  };

  const offered = (peer: AcpPeer, sessionId: string): Message[] =>
    peer.received.filter((m) => m["method"] === Acp.client.session.requestPermission && (m["params"] as Message)["sessionId"] === sessionId);

  async function answerAt(server: RunningServer, capability: string, optionId: string): Promise<number> {
    const response = await fetch(`${server.url}${NOTIFY_ANSWER_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ capability, optionId }) });
    await response.arrayBuffer();
    return response.status;
  }

  before(async () => {
    redis = await startRedisServer();
    push = await startPushService();
    // Both start together: each may make a key pair, the store keeps one.
    [a, b] = await Promise.all([node("node-a"), node("node-b")]);
  });

  after(async () => {
    for (const peer of peers) await peer.close();
    for (const server of nodes) await server.close();
    await push?.close();
    await redis?.close();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  test("a device subscribed through one node is notified by the node that runs the session; an answer through the other node is passed on, once", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { token } = await a.devices.pair("Phone");
    const phoneAtA = await open(a, token);
    const key = webPushKey(phoneAtA);
    assert.ok(key !== undefined);
    await eventually("node B to accept the device", async () => (await fetch(`${b.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status === 200, WAIT_MS);
    assert.equal(webPushKey(await open(b, token)), key, "both nodes sign with the one key pair of the store");
    const subscription = push.subscribe(key);
    await phoneAtA.request(AcpExt.pushSubscribe, { subscription });

    // A session of node B, a page of it shown through node A: the visibility follows the session to node B.
    const laptopAtB = await open(b, MAIN);
    const { sessionId } = (await laptopAtB.request(Acp.agent.session.new, { cwd: folders[0], mcpServers: [] })) as { sessionId: string };
    const pageAtA = await open(a, MAIN);
    await pageAtA.request(AcpExt.sessionAttach, { sessionId, historyPolicy: "none" });
    pageAtA.notify(AcpExt.visibility, { sessionId, visible: true });
    const turn = laptopAtB.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Shown through A\npermission Hidden" }] }, 60_000);
    await eventually("the first request at the page on node A", () => offered(pageAtA, sessionId).length === 1, WAIT_MS);
    laptopAtB.respond(offered(laptopAtB, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await eventually("the second request at the page on node A", () => offered(pageAtA, sessionId).length === 2, WAIT_MS);
    pageAtA.notify(AcpExt.visibility, { sessionId, visible: false });

    const [sent] = await push.waitFor(1, subscription.endpoint);
    assert.equal(push.messages.length, 1, "nothing was pushed while the page on node A showed the session");
    const payload = sent!.payload as NotificationPayload;
    assert.equal(payload.title, "Hidden");
    assert.equal(sent!.vapidKey, key);
    const capability = payload.answer!.capability;
    assert.equal(capabilityNode(capability), "node-b", "node B, which runs the session, sent it");

    assert.equal(await answerAt(a, capability, "allow_once"), 200, "answered through node A");
    await turn;
    assert.match(laptopAtB.agentText(sessionId), /outcome: selected allow_once.*outcome: selected allow_once/s);
    assert.equal(await answerAt(a, capability, "allow_once"), 410, "a second use through node A");
    assert.equal(await answerAt(b, capability, "allow_once"), 410, "a second use through node B");

    // A session of node A is notified by node A, to the same subscription, signed alike.
    const laptopAtA = await open(a, MAIN);
    const other = (await laptopAtA.request(Acp.agent.session.new, { cwd: folders[0], mcpServers: [] })) as { sessionId: string };
    const second = laptopAtA.request(Acp.agent.session.prompt, { sessionId: other.sessionId, prompt: [{ type: "text", text: "permission On A" }] }, 60_000);
    const found = await push.waitFor(3, subscription.endpoint);
    const fromA = found.map((m) => m.payload as NotificationPayload).find((p) => p.title === "On A");
    assert.ok(fromA !== undefined, JSON.stringify(found.map((m) => m.payload)));
    assert.equal(capabilityNode(fromA.answer!.capability), "node-a");
    assert.ok(found.every((m) => m.vapidKey === key));
    assert.equal(await answerAt(b, fromA.answer!.capability, "reject_once"), 200, "answered through node B");
    await second;
    assert.match(laptopAtA.agentText(other.sessionId), /outcome: selected reject_once/);
    assert.deepEqual(push.refusals, []);
  });
});
