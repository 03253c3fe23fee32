// The editor's deferred client (extension/deferred: api, render, wait text,
// job list) against the real /v1 route with the fixture agent. These parts
// import nothing from VS Code; the palette flow itself runs in the editor.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { DeferredApi, DeferredApiError } from "../../extension/deferred/api.ts";
import { renderCompletion, resultFileName } from "../../extension/deferred/render.ts";
import { waitLabel, waitMessage } from "../../extension/deferred/wait-text.ts";
import { JobList, MAX_REMEMBERED_JOBS, type DeferredJobEntry, type StateStore } from "../../extension/deferred/job-list.ts";
import { startV1, TOKEN, type V1Harness } from "./harness.ts";

describe("editor deferred client against /v1", () => {
  let v1: V1Harness;
  let api: DeferredApi;
  before(async () => {
    v1 = await startV1();
    api = new DeferredApi({ url: v1.url, token: TOKEN });
  });
  after(() => v1.close());

  it("lists the models for the quick pick", async () => {
    assert.deepEqual(
      (await api.models()).map((m) => [m.id, m.owned_by]),
      [["fixture", "acp-remote"]],
    );
  });

  it("submits; 202 while it runs; once done, gets the result once, then the server says gone", async () => {
    const id = await api.submit("fixture", "slow 300\nthink weighing it\necho the answer");
    await v1.jobReached(id, "running");
    assert.deepEqual(await api.fetchOnce(id), { kind: "pending" });
    await v1.jobReached(id, "done");
    const outcome = await api.fetchOnce(id);
    assert.equal(outcome.kind, "ready");
    const completion = outcome.kind === "ready" ? outcome.completion : assert.fail();
    assert.equal(completion.choices[0]?.message.content, "the answer");
    assert.deepEqual(await api.fetchOnce(id), { kind: "gone" });
    const markdown = renderCompletion(completion, "the prompt");
    assert.match(markdown, /<details>\n<summary>Reasoning<\/summary>\n\nweighing it\n\n<\/details>/);
    assert.match(markdown, /\nthe answer\n/);
    assert.match(markdown, /> the prompt/);
  });

  it("a failed job is reported as failed with its message", async () => {
    const id = await api.submit("fixture", "error -32000 it broke");
    await v1.jobReached(id, "failed");
    const outcome = await api.fetchOnce(id);
    assert.equal(outcome.kind, "failed");
    assert.match(outcome.kind === "failed" ? outcome.message : "", /it broke/);
  });

  it("cancel discards a running job; a second cancel finds it gone", async () => {
    const id = await api.submit("fixture", "slow 60000");
    await v1.jobReached(id, "running");
    assert.equal(await api.cancel(id), true);
    await v1.jobReached(id, "deleted");
    assert.deepEqual(await api.fetchOnce(id), { kind: "gone" });
    assert.equal(await api.cancel(id), false);
  });

  it("a wrong token is a DeferredApiError with status 401", async () => {
    await assert.rejects(new DeferredApi({ url: v1.url, token: "wrong" }).models(), (e: unknown) => e instanceof DeferredApiError && e.status === 401);
  });
});

describe("what the progress notification and the view say a pending job waits on", () => {
  it("queued, running, waiting for your permission (with a link that opens the request), and a stopped server", () => {
    assert.equal(waitMessage({ model: "fixture", state: "pending" }), "Queued: waiting for a free slot on fixture.");
    assert.equal(waitMessage({ model: "fixture", state: undefined }), "Queued: waiting for a free slot on fixture.");
    assert.equal(waitMessage({ model: "fixture", state: "running" }), "Running: fixture is working on it.");
    assert.equal(
      waitMessage({ model: "fixture", state: "running", permission: { agent: "fixture", title: "Deploy the site" } }),
      'Waiting for your permission: fixture asks to run "Deploy the site". [Answer](command:acpRemote.showPermissions)',
    );
    assert.match(waitMessage({ model: "fixture", state: "running", serverDown: true }), /server is not running/);
    assert.deepEqual(
      [
        waitLabel({ model: "m", state: "pending" }),
        waitLabel({ model: "m", state: "running" }),
        waitLabel({ model: "m", state: "running", permission: { agent: "a", title: "t" } }),
      ],
      ["queued", "running", "waiting for your permission"],
    );
  });

  it("the result document is titled from the job: the prompt's first line and the model, a file name without separators", () => {
    assert.equal(resultFileName({ prompt: "\n  echo the answer  \nmore", model: "fixture" }), "echo the answer · fixture.md");
    assert.equal(resultFileName({ prompt: "a/b\\c: d?", model: "org/model" }), "a b c d · org model.md");
    assert.equal(resultFileName({ prompt: "   ", model: "fixture" }), "result · fixture.md");
  });
});

describe("the editor's list of submitted jobs", () => {
  class MemoryState implements StateStore {
    readonly values = new Map<string, unknown>();
    get<T>(key: string): T | undefined {
      return this.values.get(key) as T | undefined;
    }
    async update(key: string, value: unknown): Promise<void> {
      this.values.set(key, JSON.parse(JSON.stringify(value)));
    }
  }
  const entry = (n: number, status: DeferredJobEntry["status"] = "pending"): DeferredJobEntry => ({
    requestId: `id-${n}`,
    model: "fixture",
    prompt: `prompt ${n}`,
    serverUrl: "http://127.0.0.1:1",
    submittedAt: n,
    status,
  });

  it("keeps jobs newest first across instances (a window reload), and updates them", async () => {
    const state = new MemoryState();
    const list = new JobList(state);
    let changes = 0;
    list.onDidChange(() => changes++);
    await list.add(entry(1));
    await list.add(entry(2));
    await list.update("id-1", { status: "failed", error: "boom" });
    const reloaded = new JobList(state);
    assert.deepEqual(reloaded.all().map((j) => [j.requestId, j.status]), [["id-2", "pending"], ["id-1", "failed"]]);
    assert.equal(changes, 3);
  });

  it(`keeps at most ${MAX_REMEMBERED_JOBS}, dropping the oldest finished first`, async () => {
    const list = new JobList(new MemoryState());
    await list.add(entry(0, "pending"));
    await list.add(entry(1, "opened"));
    for (let n = 2; n <= MAX_REMEMBERED_JOBS; n++) await list.add(entry(n, "pending"));
    const ids = list.all().map((j) => j.requestId);
    assert.equal(ids.length, MAX_REMEMBERED_JOBS);
    assert.ok(ids.includes("id-0"), "the oldest pending job is kept");
    assert.ok(!ids.includes("id-1"), "the finished one went");
  });
});
