// Web Push from a real `serve` (fixture agent, port 0) to a push service
// stand-in that checks each message as a push service and a browser would
// (VAPID ES256 JWT for its origin, aes128gcm decrypted with the
// subscription's keys): paired devices subscribe over /acp, a waiting
// permission request is one notification per session at a time, none while
// a page shows the session, its Allow answers the agent once, a 410 drops the
// subscription, and a revoke drops it with its answers.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acp, AcpExt } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { NOTIFY_ANSWER_PATH, type NotificationPayload } from "../../protocol/notify.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { AcpPeer, PeerRpcError } from "../helpers/acp-peer.ts";
import { eventually } from "../helpers/eventually.ts";
import { startPushService, type PushService, type PushSubscriptionJson } from "../helpers/push-service.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";

const MAIN = "web-push-main-token-0123456789";
const BOB = "web-push-bob-token-0123456789";
const TEST_TIMEOUT_MS = 60_000;

type Message = Record<string, unknown>;

/** How long a test waits for what comes by itself (an offered request, a subscription dropped), in milliseconds. */
const WAIT_MS = 15_000;

describe("Web Push to paired devices", () => {
  let dir: string;
  let server: RunningServer;
  let push: PushService;
  const peers: AcpPeer[] = [];

  const open = async (token: string): Promise<AcpPeer> => {
    const peer = await AcpPeer.open(server.url, token);
    peers.push(peer);
    return peer;
  };

  /** A paired device whose browser subscribed with the key the server gave it. */
  async function subscribedDevice(label: string): Promise<{ deviceId: string; token: string; subscription: PushSubscriptionJson; peer: AcpPeer }> {
    const { device, token } = await server.devices.pair(label);
    const peer = await open(token);
    const key = ((peer.initialized?.["_meta"] as Message)[AcpExt.metaKey] as Message)[AcpExt.webPush] as { applicationServerKey: string };
    const subscription = push.subscribe(key.applicationServerKey);
    assert.deepEqual(await peer.request(AcpExt.pushSubscribe, { subscription }), {});
    return { deviceId: device.deviceId, token, subscription, peer };
  }

  /** A session of the laptop (the server's own token), which shows it or not as the test says. */
  async function session(laptop: AcpPeer): Promise<string> {
    const created = (await laptop.request(Acp.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };
    return created.sessionId;
  }

  function prompt(peer: AcpPeer, sessionId: string, script: string): Promise<unknown> {
    return peer.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: script }] }, 40_000);
  }

  /** The permission requests the peer was offered for the session, in order. */
  function offered(peer: AcpPeer, sessionId: string): Message[] {
    return peer.received.filter((m) => m["method"] === Acp.client.session.requestPermission && (m["params"] as Message)["sessionId"] === sessionId);
  }

  async function answer(capability: string, optionId: string): Promise<{ status: number; body: Message }> {
    const response = await fetch(`${server.url}${NOTIFY_ANSWER_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ capability, optionId }) });
    return { status: response.status, body: (await response.json()) as Message };
  }

  const payloads = (subscription: PushSubscriptionJson): NotificationPayload[] =>
    push.messages.filter((m) => m.subscription === subscription.endpoint).map((m) => m.payload as NotificationPayload);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-web-push-"));
    mkdirSync(join(dir, "bob"));
    push = await startPushService();
    server = await serveFixtureAgent({
      tokens: [MAIN, { label: "bob", token: BOB }],
      roots: [{ person: "bob", dir: join(dir, "bob") }],
      dataDir: join(dir, "data"),
      notify: { pushAgent: new Agent({ ca: push.ca }) },
    });
  });

  after(async () => {
    for (const peer of peers) await peer.close();
    await server?.close();
    await push?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a paired device learns the key to subscribe with; the server's own token and another person's do not, and their subscribe is refused", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { device, token } = await server.devices.pair("Phone A");
    const phone = await open(token);
    const ours = (phone.initialized?.["_meta"] as Message)[AcpExt.metaKey] as Message;
    const key = (ours[AcpExt.webPush] as { applicationServerKey: string }).applicationServerKey;
    assert.equal(Buffer.from(key, "base64url").length, 65, "an uncompressed P-256 point");
    for (const other of [MAIN, BOB]) {
      const peer = await open(other);
      assert.equal(((peer.initialized?.["_meta"] as Message)[AcpExt.metaKey] as Message)[AcpExt.webPush], undefined);
      await assert.rejects(peer.request(AcpExt.pushSubscribe, { subscription: push.subscribe() }), (error: PeerRpcError) => error.code === ErrorCode.InvalidRequest && /paired device/.test(error.message));
    }
    await assert.rejects(phone.request(AcpExt.pushSubscribe, { subscription: { endpoint: "http://127.0.0.1:1/push", keys: { p256dh: "x", auth: "y" } } }), (error: PeerRpcError) => error.code === ErrorCode.InvalidParams);
    assert.deepEqual(await server.store.devices.pushes(), [], "nothing kept from a refused subscribe");
    const subscription = push.subscribe(key);
    await phone.request(AcpExt.pushSubscribe, { subscription });
    assert.deepEqual(await server.store.devices.pushes(), [{ deviceId: device.deviceId, subscription: JSON.stringify(subscription) }]);
    await phone.request(AcpExt.pushUnsubscribe, {});
    assert.deepEqual(await server.store.devices.pushes(), []);
    await server.devices.revoke(device.deviceId);
  });

  test("ten requests at once in one session are one notification at a time: the first, then the next once it is answered, under one tag", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone B");
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    const turn = prompt(laptop, sessionId, "asks 10 src/app.ts");
    await eventually("the ten requests at the laptop", () => offered(laptop, sessionId).length === 10, WAIT_MS);
    const [first] = await push.waitFor(1, phone.subscription.endpoint);
    const p1 = first!.payload as NotificationPayload;
    assert.equal(p1.kind, "permission");
    assert.equal(p1.title, "Edit src/app.ts:1", "the tool call's title");
    assert.match(p1.body, /^edit: src\/app\.ts:1\n/, "its kind and locations");
    assert.equal(p1.tag, `session:${sessionId}`);
    assert.equal(p1.url, `#/s/fixture/${encodeURIComponent(sessionId)}`);
    assert.equal(p1.requestId, offered(laptop, sessionId)[0]!["id"], "the request the session's clients see");
    assert.deepEqual(p1.answer?.actions, [
      { optionId: "allow_once", kind: "allow_once", label: "Allow once" },
      { optionId: "reject_once", kind: "reject_once", label: "Reject" },
    ]);
    assert.equal(first!.urgency, "high");
    assert.ok(first!.topic !== undefined && first!.topic.length <= 32);

    assert.equal((await answer(p1.answer!.capability, "allow_once")).status, 200);
    // The next request's notification is sent after that answer: any sent with the first would be here before it.
    const [, second] = await push.waitFor(2, phone.subscription.endpoint);
    const p2 = second!.payload as NotificationPayload;
    assert.equal(p2.title, "Edit src/app.ts:2");
    assert.equal(p2.tag, p1.tag, "it replaces the first on the phone");
    assert.equal(second!.topic, first!.topic, "and at the push service");
    assert.equal(payloads(phone.subscription).length, 2);

    // The laptop answers the rest; the turn ends.
    for (const request of offered(laptop, sessionId).slice(1)) laptop.respond(request["id"], { outcome: { outcome: "selected", optionId: "reject_once" } });
    await turn;
    assert.match(laptop.agentText(sessionId), /outcomes: allow_once, reject_once, reject_once/);
    await server.devices.revoke(phone.deviceId);
  });

  test("Allow on the notification reaches the agent once; a used capability, one with an option it does not offer, and one of a request answered elsewhere are refused with 410", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone C");
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    const turn = prompt(laptop, sessionId, "permission Write notes.md\npermission Delete notes.md\npermission Move notes.md");

    // The first request: an option the notification does not offer uses its capability up, while the request still waits.
    const [first] = await push.waitFor(1, phone.subscription.endpoint);
    const misused = (first!.payload as NotificationPayload).answer!.capability;
    const notOffered = await answer(misused, "allow_always");
    assert.equal(notOffered.status, 410, JSON.stringify(notOffered.body));
    const afterMisuse = await answer(misused, "allow_once");
    assert.equal(afterMisuse.status, 410, `used up, though its request still waits: ${JSON.stringify(afterMisuse.body)}`);
    await eventually("the first request at the laptop", () => offered(laptop, sessionId).length === 1, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "reject_once" } });

    // The second: Allow on the notification answers it, once.
    const [, second] = await push.waitFor(2, phone.subscription.endpoint);
    const capability = (second!.payload as NotificationPayload).answer!.capability;
    const granted = await answer(capability, "allow_once");
    assert.deepEqual(granted, { status: 200, body: { answered: true, optionId: "allow_once" } });
    await laptop.waitFor((m) => m["method"] === Acp.protocol.cancelRequest && (m["params"] as Message)["requestId"] === offered(laptop, sessionId)[1]?.["id"], "the second request withdrawn from the laptop");
    const again = await answer(capability, "allow_once");
    assert.equal(again.status, 410, JSON.stringify(again.body));

    // The third: answered on the laptop first, then its notification's answer comes too late.
    const [, , third] = await push.waitFor(3, phone.subscription.endpoint);
    const late = (third!.payload as NotificationPayload).answer!.capability;
    await eventually("the third request at the laptop", () => offered(laptop, sessionId).length === 3, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[2]!["id"], { outcome: { outcome: "selected", optionId: "reject_once" } });
    await turn;
    assert.equal((await answer(late, "allow_once")).status, 410);
    assert.match(laptop.agentText(sessionId), /outcome: selected reject_once.*outcome: selected allow_once.*outcome: selected reject_once/s);
    assert.equal((await answer("not-a-capability", "allow_once")).status, 410);
    const malformed = await fetch(`${server.url}${NOTIFY_ANSWER_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    assert.equal(malformed.status, 400);
    assert.equal((await fetch(`${server.url}${NOTIFY_ANSWER_PATH}`)).status, 405);
    await server.devices.revoke(phone.deviceId);
  });

  test("nothing is pushed while a page shows the session; hidden, the waiting request is pushed, and a turn's end is told", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone D");
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    laptop.notify(AcpExt.visibility, { sessionId, visible: true });
    // Shown: the request and the turn's end tell nobody.
    let turn = prompt(laptop, sessionId, "permission Shown edit");
    await eventually("the first request at the laptop", () => offered(laptop, sessionId).length === 1, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await turn;
    // Still shown when the next request comes; hidden while it waits: now it is pushed.
    turn = prompt(laptop, sessionId, "permission Hidden edit");
    await eventually("the second request at the laptop", () => offered(laptop, sessionId).length === 2, WAIT_MS);
    laptop.notify(AcpExt.visibility, { sessionId, visible: false });
    const [hidden] = await push.waitFor(1, phone.subscription.endpoint);
    assert.equal((hidden!.payload as NotificationPayload).title, "Hidden edit");
    assert.equal(payloads(phone.subscription).length, 1, "nothing was pushed while the session was shown");
    laptop.respond(offered(laptop, sessionId)[1]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await turn;
    const [, ended] = await push.waitFor(2, phone.subscription.endpoint);
    const end = ended!.payload as NotificationPayload;
    assert.equal(end.kind, "turn_ended");
    assert.equal(end.body, "Finished: outcome: selected allow_once", "the stop reason and the first line of the answer");
    assert.equal(end.tag, `session:${sessionId}`);
    assert.equal(ended!.urgency, "normal");
    await server.devices.revoke(phone.deviceId);
  });

  test("another person's sessions notify none of the server's person's devices", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone E");
    const bob = await open(BOB);
    const bobs = (await bob.request(Acp.agent.session.new, { cwd: join(dir, "bob"), mcpServers: [] })) as { sessionId: string };
    const bobTurn = prompt(bob, bobs.sessionId, "permission Bob's edit");
    await eventually("Bob's request", () => offered(bob, bobs.sessionId).length === 1, WAIT_MS);
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    const turn = prompt(laptop, sessionId, "permission Owner's edit");
    const [only] = await push.waitFor(1, phone.subscription.endpoint);
    assert.equal((only!.payload as NotificationPayload).title, "Owner's edit");
    bob.respond(offered(bob, bobs.sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await bobTurn;
    await eventually("the owner's request", () => offered(laptop, sessionId).length === 1, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await turn;
    await push.waitFor(2, phone.subscription.endpoint);
    assert.deepEqual(payloads(phone.subscription).map((p) => [p.kind, p.sessionId]), [["permission", sessionId], ["turn_ended", sessionId]], "the owner's request and turn end only");
    await server.devices.revoke(phone.deviceId);
  });

  test("a 410 from the push service drops the subscription from the store", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone F");
    push.answer(phone.subscription.endpoint, 410);
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    const turn = prompt(laptop, sessionId, "permission Gone edit");
    await eventually("the subscription dropped", async () => !(await server.store.devices.pushes()).some((p) => p.deviceId === phone.deviceId), WAIT_MS);
    assert.equal((await server.devices.list()).some((d) => d.deviceId === phone.deviceId), true, "the device stays paired");
    await eventually("the request at the laptop", () => offered(laptop, sessionId).length === 1, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await turn;
    await server.devices.revoke(phone.deviceId);
  });

  test("revoking a device drops its subscription, and the answer its notification carries is refused", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone G");
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    const turn = prompt(laptop, sessionId, "permission Revoked edit");
    const [asked] = await push.waitFor(1, phone.subscription.endpoint);
    await server.devices.revoke(phone.deviceId);
    assert.deepEqual((await server.store.devices.pushes()).filter((p) => p.deviceId === phone.deviceId), []);
    assert.equal((await answer((asked!.payload as NotificationPayload).answer!.capability, "allow_once")).status, 410);
    await eventually("the request at the laptop", () => offered(laptop, sessionId).length === 1, WAIT_MS);
    laptop.respond(offered(laptop, sessionId)[0]!["id"], { outcome: { outcome: "selected", optionId: "reject_once" } });
    await turn;
    assert.match(laptop.agentText(sessionId), /outcome: selected reject_once/);
    assert.deepEqual(push.refusals, [], "every message the server sent was signed and encrypted as a push service and browser check");
  });

  // Last: the agent process exits, and the server starts it again.
  test("an agent that fails mid-turn is told as the session's failure", { timeout: TEST_TIMEOUT_MS }, async () => {
    const phone = await subscribedDevice("Phone H");
    const laptop = await open(MAIN);
    const sessionId = await session(laptop);
    await assert.rejects(prompt(laptop, sessionId, "echo Starting.\nexit 3"));
    const [failed] = await push.waitFor(1, phone.subscription.endpoint);
    const payload = failed!.payload as NotificationPayload;
    assert.equal(payload.kind, "failed");
    assert.equal(payload.tag, `session:${sessionId}`);
    assert.match(payload.body, /^Turn interrupted: the agent exited \(agent fixture exited with code 3/);
    assert.equal(payload.answer, undefined);
    await server.devices.revoke(phone.deviceId);
  });
});
