// The editor's deferred client (extension/deferred: api, backoff, render,
// job list) against the real /v1 route with the fixture agent. These parts
// import nothing from VS Code; the palette flow itself runs in the editor.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { DeferredApi, DeferredApiError } from "../../extension/deferred/api.ts";
import { backoffDelays, pollUntilSettled } from "../../extension/deferred/backoff.ts";
import { renderCompletion } from "../../extension/deferred/render.ts";
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

  it("submits, polls with backoff until ready, gets the result once, then the server says gone", async () => {
    const id = await api.submit("fixture", "slow 300\nthink weighing it\necho the answer");
    const waits: number[] = [];
    const outcome = await pollUntilSettled(() => api.fetchOnce(id), new AbortController().signal, {
      minMs: 20,
      maxMs: 80,
      onWait: (ms) => waits.push(ms),
    });
    assert.equal(outcome.kind, "ready");
    assert.ok(waits.length >= 1);
    assert.deepEqual(waits.slice(0, 4), [20, 40, 80, 80].slice(0, Math.min(4, waits.length)));
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
    const outcome = await pollUntilSettled(() => api.fetchOnce(id), new AbortController().signal, { minMs: 20, maxMs: 80 });
    assert.equal(outcome.kind, "failed");
    assert.match(outcome.kind === "failed" ? outcome.message : "", /it broke/);
  });

  it("cancel discards a pending job; polling stops when aborted", async () => {
    const id = await api.submit("fixture", "slow 60000");
    const controller = new AbortController();
    const polling = pollUntilSettled(() => api.fetchOnce(id), controller.signal, { minMs: 20, maxMs: 20 });
    controller.abort(new Error("stop"));
    await assert.rejects(polling, /stop/);
    assert.equal(await api.cancel(id), true);
    assert.equal(await api.cancel(id), false);
  });

  it("a wrong token is a DeferredApiError with status 401", async () => {
    await assert.rejects(new DeferredApi({ url: v1.url, token: "wrong" }).models(), (e: unknown) => e instanceof DeferredApiError && e.status === 401);
  });
});

describe("editor polling schedule (spec: minimum 1 second, maximum 60 seconds, factor 2)", () => {
  it("waits 1, 2, 4, 8, 16, 32, 60, 60 seconds", () => {
    const delays = backoffDelays();
    assert.deepEqual(
      Array.from({ length: 8 }, () => delays.next().value),
      [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000],
    );
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
