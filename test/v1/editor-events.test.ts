// What the editor hears of its deferred completions (docs/deferred.md, From
// the editor; docs/control-protocol.md): the real sidecar under the control
// protocol (`serve --control stdio`, a child process driven over its stdio as
// an editor drives it), with the fixture agent as the model "fixture", and
// /v1 over HTTP as any client uses it. The editor is told each change of its
// person's jobs, and a job's permission request names the job; /v1 answers as
// it always did (202 with an empty body, the result once, then 404).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ControlHostRequest,
  ControlNotification,
  type DeferredJobEvent,
  type DeferredJobState,
  type PermissionAnswer,
  type PermissionInfo,
} from "../../protocol/control.ts";
import { NODE } from "../helpers/connect-child.ts";
import { spawnControlled, type ControlChild } from "../helpers/control-child.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

const TOKEN = "editor-events-token-0123456789";
const OTHER_TOKEN = "editor-events-other-0123456789";
const DEADLINE_MS = 60_000;

/** Resolves when `probe` holds, checked at each of `changes`; rejects after the deadline with `what`. */
function until(what: string, probe: () => boolean, changes: Set<() => void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!probe()) return;
      changes.delete(check);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      changes.delete(check);
      reject(new Error(`timed out waiting for ${what}`));
    }, DEADLINE_MS);
    changes.add(check);
    check();
  });
}

describe("deferred completions as the editor hears of them (acpRemote/deferred/changed)", () => {
  let controlled: ControlChild | undefined;
  let url: string;
  let stderr = "";
  const events: DeferredJobEvent[] = [];
  const asked: Array<{ info: PermissionInfo; answer(a: PermissionAnswer): void }> = [];
  const changes = new Set<() => void>();
  const changed = (): void => {
    for (const c of [...changes]) c();
  };

  before(async () => {
    // The server's person's token comes from the editor; another person's is labelled on the command line.
    controlled = await spawnControlled({
      token: TOKEN,
      args: ["--token", `other:${OTHER_TOKEN}`],
      permissionPolicy: "both",
      serve: { agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }] },
      onStderr: (s) => s.on("data", (c: Buffer) => (stderr += c.toString())),
    });
    const { connection, started } = controlled;
    connection.onNotification(ControlNotification.deferredChanged, (event) => {
      events.push(event);
      changed();
    });
    connection.onRequest(ControlHostRequest.requestPermission, (info) => {
      return new Promise<PermissionAnswer>((resolve) => {
        asked.push({ info, answer: resolve });
        changed();
      });
    });
    assert.ok("url" in started, `the server started: ${JSON.stringify(started)}`);
    url = started.url;
  });

  after(async () => {
    await controlled?.stop();
  });

  async function submit(prompt: string, token = TOKEN): Promise<string> {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fixture", messages: [{ role: "user", content: prompt }], deferred: true }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { request_id: string }).request_id;
  }

  async function get(id: string, token = TOKEN): Promise<{ status: number; body: string }> {
    const res = await fetch(`${url}/v1/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: await res.text() };
  }

  const statesOf = (id: string): DeferredJobState[] => events.filter((e) => e.requestId === id).map((e) => e.state);
  const reached = (id: string, state: DeferredJobState): Promise<void> => until(`job ${id} to be ${state}; stderr:\n${stderr}`, () => statesOf(id).includes(state), changes);

  it("a job of the editor's person: pending, running, done with the time it finished, then deleted once its one GET took it; the GET answers as before", async () => {
    const submitted = Date.now();
    const id = await submit("slow 300\necho the answer");
    await reached(id, "running");
    const pending = await get(id);
    assert.deepEqual(pending, { status: 202, body: "" }, "202 with an empty body while it runs");
    await reached(id, "done");
    const done = events.find((e) => e.requestId === id && e.state === "done")!;
    assert.ok(done.at >= submitted + 300 && done.at <= Date.now(), `the finish time (${done.at}) is the sidecar's, after the run's 300 ms`);
    const result = await get(id);
    assert.equal(result.status, 200);
    assert.equal((JSON.parse(result.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "the answer");
    await reached(id, "deleted");
    assert.deepEqual(statesOf(id), ["pending", "running", "done", "deleted"]);
    assert.equal((await get(id)).status, 404, "the result is handed out once");
  });

  it("a failed job is told as failed, and a cancelled one as deleted", async () => {
    const failing = await submit("error -32000 it broke");
    await reached(failing, "failed");
    assert.equal((await get(failing)).status, 500);
    const slow = await submit("slow 60000");
    await reached(slow, "running");
    const res = await fetch(`${url}/v1/chat/deferred-completion/${slow}`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    await reached(slow, "deleted");
  });

  it("another person's jobs are not told to the editor", async () => {
    const theirs = await submit("echo theirs", OTHER_TOKEN);
    // Nothing tells when it is done but its GET.
    const deadline = Date.now() + DEADLINE_MS;
    while ((await get(theirs, OTHER_TOKEN)).status === 202) {
      assert.ok(Date.now() < deadline, "their job finished");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Notifications keep their order: once ours is told, anything told of theirs before is here.
    const ours = await submit("echo ours");
    await reached(ours, "pending");
    assert.deepEqual(statesOf(theirs), []);
  });

  it("a job's permission request reaches the editor naming the job (its request_id); the job waits on it, and the answer finishes it", async () => {
    const id = await submit("permission Deploy the site\necho deployed");
    await until("the editor to be asked", () => asked.some((a) => a.info.requestId === id), changes);
    const ask = asked.find((a) => a.info.requestId === id)!;
    assert.equal(ask.info.toolCall.title, "Deploy the site");
    assert.deepEqual(statesOf(id), ["pending", "running"], "running, and waiting on the permission");
    assert.deepEqual(await get(id), { status: 202, body: "" });
    ask.answer({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await reached(id, "done");
    const result = await get(id);
    assert.match(result.body, /outcome: selected allow_once/);
  });
});
