// Who settled a permission request travels with it: to the clients that
// attached (the proposal's `permission_resolved`, with our `_meta`), to the
// editor (the hub's settled event, sent as `acpRemote/permission/settled`)
// and into the journal's mark (a replay). A paired device is named by the
// name it was given. The hub and a real agent process (the fixture over stdio).
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { PermissionSettledEvent } from "../../protocol/control.ts";
import { readMark } from "../../protocol/history.ts";
import type { JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import type { AgentHub } from "../../sidecar/hub/hub.ts";
import { OWNER, type Principal } from "../../sidecar/hub/types.ts";
import { type Delivered, newSession, open, prompt } from "../helpers/hub-test-client.ts";
import { startTempHub } from "../helpers/temp-hub.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const fixture: AgentSpec = { name: "fixture", command: process.execPath, args: [FIXTURE] };
/** The server's person on a paired phone (a device token), and with the access token. */
const PHONE: Principal = { ...OWNER, deviceId: "device-pixel" };
const DEVICES = new Map([["device-pixel", "Pixel 8"]]);

const isMethod = (method: string) => (d: Delivered) => "method" in d.message && d.message.method === method;

describe("who settled a permission request", () => {
  let dir: string;
  let hub: AgentHub;
  let close: (() => Promise<void>) | undefined;
  const events: PermissionSettledEvent[] = [];

  before(async () => {
    ({ dir, hub, close } = await startTempHub("acp-remote-answerer-", (dir) => ({ agents: [fixture], defaultCwd: dir, log: () => undefined, deviceLabel: (id) => DEVICES.get(id) })));
    hub.onPermissionSettled((event) => events.push(event));
  });

  after(async () => {
    await close?.();
  });

  test("regression: a permission the phone answered showed as 'Withdrawn' in the editor; the device's name travels in permission_resolved, the settled event and the replay's mark", async () => {
    const desk = await open(hub, OWNER);
    const sessionId = await newSession(desk, dir);
    const phone = await open(hub, PHONE);
    await phone.call("session/attach", { sessionId, historyPolicy: "none" });
    const watcher = await open(hub, OWNER);
    await watcher.call("session/attach", { sessionId, historyPolicy: "none" });

    const turn = desk.request("session/prompt", prompt(sessionId, "permission Edit README"));
    const asked = (await phone.waitFor(isMethod("session/request_permission"))).message as JsonRpcRequest;
    phone.connection.receive({ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
    assert.deepEqual((await turn).response.result, { stopReason: "end_turn" });

    const resolved = watcher.updates(sessionId).find((u) => u["sessionUpdate"] === "permission_resolved");
    assert.deepEqual(resolved?.["_meta"], { acpRemote: { settledBy: "client", device: "Pixel 8" } });
    assert.equal(resolved?.["clientId"], phone.connectionId);

    const settled = events.filter((e) => e.sessionId === sessionId);
    assert.equal(settled.length, 1);
    assert.deepEqual({ ...settled[0], permissionId: undefined }, { permissionId: undefined, sessionId, outcome: { outcome: "selected", optionId: "allow_once" }, settledBy: "client", device: "Pixel 8" });

    const marks = (await hub.openSession(sessionId)).updates.map((n) => readMark(n.update)).filter((m) => m !== undefined && "permission" in m);
    assert.equal(marks.length, 1);
    const mark = marks[0] as { permission: { settledBy: string; device?: string; outcome: unknown } };
    assert.equal(mark.permission.settledBy, "client");
    assert.equal(mark.permission.device, "Pixel 8");
    for (const c of [desk, phone, watcher]) c.connection.close();
  });

  test("an answer from a connection with the access token names no device, and a stopped turn says it was stopped", async () => {
    const desk = await open(hub, OWNER);
    const sessionId = await newSession(desk, dir);
    const watcher = await open(hub, OWNER);
    await watcher.call("session/attach", { sessionId, historyPolicy: "none" });

    const first = desk.request("session/prompt", prompt(sessionId, "permission Run tests"));
    const asked = (await desk.waitFor(isMethod("session/request_permission"))).message as JsonRpcRequest;
    desk.connection.receive({ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "selected", optionId: "reject_once" } } });
    await first;
    const byDesk = watcher.updates(sessionId).filter((u) => u["sessionUpdate"] === "permission_resolved");
    assert.deepEqual(byDesk.at(-1)?.["_meta"], { acpRemote: { settledBy: "client" } });

    const second = desk.request("session/prompt", prompt(sessionId, "permission Deploy"));
    await watcher.waitFor((d) => isMethod("session/request_permission")(d) && (d.message as JsonRpcRequest).id !== asked.id);
    desk.connection.receive({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    await second;
    const resolved = watcher.updates(sessionId).filter((u) => u["sessionUpdate"] === "permission_resolved");
    assert.deepEqual(resolved.at(-1)?.["outcome"], { outcome: "cancelled" });
    assert.equal((resolved.at(-1)?.["_meta"] as { acpRemote: { settledBy: string } }).acpRemote.settledBy, "cancel");
    assert.deepEqual(
      events.filter((e) => e.sessionId === sessionId).map((e) => [e.settledBy, e.device]),
      [
        ["client", undefined],
        ["cancel", undefined],
      ],
    );
    for (const c of [desk, watcher]) c.connection.close();
  });
});
