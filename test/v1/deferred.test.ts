// The deferred mode end to end: the `openai` client against /v1 on a real
// server, with the fixture agent (test/fixtures/agent.ts) as the model
// "fixture" on a real hub. Case names quote the spec's rows.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { APIError, AuthenticationError, NotFoundError } from "openai";
import { countTokens } from "gpt-tokenizer";
import { serve } from "../../sidecar/server/serve.ts";
import { V1_PERMISSIONS_ENV, v1PermissionsFromEnv } from "../../sidecar/server/environment.ts";
import { fixtureAgent, ManualClock, OTHER_TOKEN, pollDeferred, pollDeferredFailure, startV1, TOKEN, type StartOptions, type V1Harness } from "./harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DAY_MS = 24 * 60 * 60_000;

async function submit(client: OpenAI, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const body = (await client.post("/chat/completions", {
    body: { model: "fixture", messages: [{ role: "user", content }], deferred: true, ...extra },
  })) as { request_id: string };
  return body.request_id;
}

/** startV1, and the openai client of its token. */
async function startWithClient(options: StartOptions = {}): Promise<{ v1: V1Harness; client: OpenAI }> {
  const v1 = await startV1(options);
  return { v1, client: v1.client() };
}

describe("deferred completions with the openai client (spec: Endpoints)", () => {
  let v1: V1Harness;
  let client: OpenAI;
  before(async () => ({ v1, client } = await startWithClient()));
  after(() => v1.close());

  it("none → POST with deferred true → pending: 200 and a request_id in UUID format", async () => {
    const { data, response } = await client
      .post("/chat/completions", { body: { model: "fixture", messages: [{ role: "user", content: "echo hi" }], deferred: true } })
      .withResponse();
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(data as object), ["request_id"]);
    assert.match((data as { request_id: string }).request_id, UUID);
  });

  it("pending → GET, result not ready → 202 with an empty body", async () => {
    const id = await submit(client, "slow 60000");
    const response = await fetch(`${v1.baseURL}/chat/deferred-completion/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.status, 202);
    assert.equal(await response.text(), "");
    await client.delete(`/chat/deferred-completion/${id}`);
  });

  it("ready → GET within 24 hours → 200 with every field of the completion result, exactly once; then 404 (NotFoundError)", async () => {
    const before = Math.floor(Date.now() / 1000);
    const script = "think pondering\necho hello\necho  world";
    const id = await submit(client, script);
    const got = await pollDeferred(client, id);
    assert.equal(got.status, 200);
    const body = got.body as OpenAI.Chat.ChatCompletion & {
      choices: Array<{ message: { reasoning_content?: string } }>;
      usage: { num_sources_used: number };
    };
    assert.deepEqual(Object.keys(body).sort(), ["choices", "created", "id", "model", "object", "system_fingerprint", "usage"]);
    assert.equal(body.id, id);
    assert.equal(body.object, "chat.completion");
    assert.ok(Number.isInteger(body.created) && body.created >= before && body.created <= Math.ceil(Date.now() / 1000));
    assert.equal(body.model, "fixture");
    assert.equal(body.choices.length, 1);
    assert.deepEqual(body.choices[0], {
      index: 0,
      message: { role: "assistant", content: "hello world", refusal: null, reasoning_content: "pondering" },
      finish_reason: "stop",
    });
    assert.equal(typeof body.system_fingerprint, "string");
    const usage = body.usage as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(usage).sort(), [
      "completion_tokens",
      "completion_tokens_details",
      "num_sources_used",
      "prompt_tokens",
      "prompt_tokens_details",
      "total_tokens",
    ]);
    assert.deepEqual(Object.keys(usage["prompt_tokens_details"] as object).sort(), ["audio_tokens", "cached_tokens", "image_tokens", "text_tokens"]);
    assert.deepEqual(Object.keys(usage["completion_tokens_details"] as object).sort(), [
      "accepted_prediction_tokens",
      "audio_tokens",
      "reasoning_tokens",
      "rejected_prediction_tokens",
    ]);
    // Counted with the tokenizer (o200k_base): the agent reported none. "pondering" is reasoning, "hello world"
    // content; the prompt is OpenAI's chat format, 3 tokens per message and 3 to prime the reply.
    assert.equal(body.usage.prompt_tokens, 3 + 3 + countTokens("user") + countTokens(script));
    assert.equal(body.usage.completion_tokens_details?.reasoning_tokens, countTokens("pondering"));
    assert.equal(body.usage.completion_tokens, countTokens("pondering") + countTokens("hello world"));
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    await assert.rejects(client.get(`/chat/deferred-completion/${id}`), NotFoundError);
  });

  it("the usage the agent reports is used instead of counting", async () => {
    const id = await submit(client, "echo counted by the agent\nusage");
    const body = (await pollDeferred(client, id)).body as OpenAI.Chat.ChatCompletion;
    assert.equal(body.usage?.prompt_tokens, 10);
    assert.equal(body.usage?.completion_tokens, 20);
    assert.equal(body.usage?.total_tokens, 30);
  });

  it("50 concurrent GETs of one ready result: exactly one 200, the others 404", async () => {
    const id = await submit(client, "echo once");
    await v1.jobReached(id, "done");
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        client
          .get(`/chat/deferred-completion/${id}`)
          .withResponse()
          .then(({ response }) => response.status, (e: unknown) => (e instanceof APIError ? (e.status ?? 0) : 0)),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 1);
    assert.equal(statuses.filter((s) => s === 404).length, 49);
  });

  it("a request_id of another key → 404, and the owner still gets it", async () => {
    const id = await submit(client, "echo mine");
    await v1.jobReached(id, "done");
    await assert.rejects(v1.client(OTHER_TOKEN).get(`/chat/deferred-completion/${id}`), NotFoundError);
    assert.equal((await pollDeferred(client, id)).status, 200);
  });

  it("an unknown request_id → 404 (NotFoundError) with param request_id", async () => {
    await assert.rejects(client.get("/chat/deferred-completion/00000000-0000-4000-8000-000000000000"), (e: unknown) => {
      assert.ok(e instanceof NotFoundError);
      assert.equal(e.param, "request_id");
      return true;
    });
  });

  it("no key, or a wrong key → 401 (AuthenticationError) on both endpoints", async () => {
    const wrong = new OpenAI({ apiKey: "not-the-token", baseURL: v1.baseURL, maxRetries: 0 });
    await assert.rejects(wrong.post("/chat/completions", { body: { model: "fixture", messages: [], deferred: true } }), AuthenticationError);
    await assert.rejects(wrong.get("/chat/deferred-completion/x"), AuthenticationError);
    const none = await fetch(`${v1.baseURL}/chat/deferred-completion/x`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.equal(((await none.json()) as { error: { code: string } }).error.code, "invalid_api_key");
  });

  it("a job whose agent exits mid-prompt answers once with a 5xx and an error body, then 404", async () => {
    const id = await submit(client, "echo partial\nexit 3");
    const got = await pollDeferredFailure(client, id);
    assert.ok(got instanceof APIError, `expected an error, got ${JSON.stringify(got)}`);
    assert.ok((got.status ?? 0) >= 500, `status ${got.status}`);
    assert.equal((got.error as { type?: string }).type, "server_error");
    await assert.rejects(client.get(`/chat/deferred-completion/${id}`), NotFoundError);
  });

  it("DELETE (beyond the spec) cancels a running job; then GET → 404", async () => {
    const id = await submit(client, "slow 60000");
    await v1.jobReached(id, "running");
    const deleted = await client.delete(`/chat/deferred-completion/${id}`);
    assert.deepEqual(deleted, { request_id: id, object: "chat.completion.deferred.deleted", deleted: true });
    await assert.rejects(client.get(`/chat/deferred-completion/${id}`), NotFoundError);
    await assert.rejects(client.delete(`/chat/deferred-completion/${id}`), NotFoundError);
  });
});

describe("plain and streamed completions on the same endpoint (design: decision 5)", () => {
  let v1: V1Harness;
  let client: OpenAI;
  before(async () => ({ v1, client } = await startWithClient()));
  after(() => v1.close());

  it("GET /v1/models lists every agent as a model owned by acp-remote", async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => ({ id: m.id, object: m.object, owned_by: m.owned_by })),
      [{ id: "fixture", object: "model", owned_by: "acp-remote" }],
    );
    assert.equal((await client.models.retrieve("fixture")).id, "fixture");
    await assert.rejects(client.models.retrieve("nope"), NotFoundError);
  });

  for (const [stop, finish] of [
    ["end_turn", "stop"],
    ["max_tokens", "length"],
    ["max_turn_requests", "length"],
    ["refusal", "content_filter"],
  ] as const) {
    it(`stop reason ${stop} → finish_reason ${finish}`, async () => {
      const script = stop === "end_turn" ? "echo done" : `echo done\nstop ${stop}`;
      const completion = await client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: script }] });
      assert.equal(completion.choices[0]?.finish_reason, finish);
      assert.equal(completion.choices[0]?.message.content, "done");
    });
  }

  it("system messages reach the agent first, then the user's message (text parts flattened)", async () => {
    const completion = await client.chat.completions.create({
      model: "fixture",
      messages: [
        { role: "system", content: "echo [instructions]" },
        { role: "user", content: [{ type: "text", text: "echo [from" }, { type: "text", text: "echo parts]" }] },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, "[instructions][fromparts]");
  });

  it("an unknown model → 404 (NotFoundError) with param model", async () => {
    await assert.rejects(client.chat.completions.create({ model: "gpt-nope", messages: [{ role: "user", content: "x" }] }), (e: unknown) => {
      assert.ok(e instanceof NotFoundError);
      assert.equal(e.param, "model");
      assert.equal(e.code, "model_not_found");
      return true;
    });
  });

  it("stream: true → chat.completion.chunk events with reasoning_content and content deltas as the agent sends them, then usage, then [DONE]", async () => {
    const stream = await client.chat.completions.create({
      model: "fixture",
      messages: [{ role: "user", content: "think step one\necho alpha\necho beta" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: Array<Record<string, unknown>> = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      assert.equal(chunk.object, "chat.completion.chunk");
      assert.equal(chunk.model, "fixture");
      const choice = chunk.choices[0];
      if (choice) {
        deltas.push(choice.delta as Record<string, unknown>);
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.deepEqual(deltas, [{ role: "assistant", content: "" }, { reasoning_content: "step one" }, { content: "alpha" }, { content: "beta" }, {}]);
    assert.equal(finish, "stop");
    assert.equal(usage?.completion_tokens_details?.reasoning_tokens, countTokens("step one"));
    assert.equal(usage?.completion_tokens, countTokens("step one") + countTokens("alphabeta"));
  });

  it("an agent error after the stream began → an error event (the openai client raises APIError), then [DONE]", async () => {
    const stream = await client.chat.completions.create({
      model: "fixture",
      messages: [{ role: "user", content: "echo partial\nerror -32000 it broke" }],
      stream: true,
    });
    let text = "";
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      })(),
      (e: unknown) => e instanceof APIError && /it broke/.test(e.message),
    );
    assert.equal(text, "partial");
    const response = await fetch(`${v1.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fixture", messages: [{ role: "user", content: "error -32000 it broke" }], stream: true }),
    });
    const events = (await response.text()).split("\n\n").filter((e) => e.length > 0);
    assert.equal(events.at(-1), "data: [DONE]");
    const error = JSON.parse(events.at(-2)!.slice("data: ".length)) as { error: { type: string; code: string } };
    assert.deepEqual([error.error.type, error.error.code], ["server_error", "backend_error"]);
  });

  it("stream: true, on the wire: data: lines, the last one data: [DONE]", async () => {
    const response = await fetch(`${v1.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fixture", messages: [{ role: "user", content: "echo wire" }], stream: true }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = (await response.text()).split("\n\n").filter((e) => e.length > 0);
    assert.ok(events.every((e) => e.startsWith("data: ")));
    assert.equal(events.at(-1), "data: [DONE]");
  });
});

describe("permissions during a one-shot run (OneShotPermissionPolicy)", () => {
  for (const [policy, answer] of [
    [undefined, "outcome: selected reject_once"],
    ["allow", "outcome: selected allow_once"],
    ["reject", "outcome: selected reject_once"],
  ] as const) {
    it(`permissions ${policy ?? "(default, no editor attached)"} → ${answer}`, async () => {
      const v1 = await startV1(policy ? { permissions: policy } : {});
      try {
        const client = v1.client();
        const id = await submit(client, "permission edit the file");
        const body = (await pollDeferred(client, id)).body as OpenAI.Chat.ChatCompletion;
        assert.equal(body.choices[0]?.message.content, answer);
      } finally {
        await v1.close();
      }
    });
  }
});

describe("permissions from the environment (ACP_REMOTE_V1_PERMISSIONS)", () => {
  for (const [value, expected] of [
    [undefined, undefined],
    ["", undefined],
    ["allow", "allow"],
    ["reject", "reject"],
    ["editor", "editor"],
  ] as const) {
    it(`${JSON.stringify(value)} → ${String(expected)}`, () => {
      assert.equal(v1PermissionsFromEnv(value === undefined ? {} : { [V1_PERMISSIONS_ENV]: value }), expected);
    });
  }

  it("allow, passed by the composition → the agent's allow option is chosen", async () => {
    const v1 = await startV1({ permissions: v1PermissionsFromEnv({ [V1_PERMISSIONS_ENV]: "allow" }) });
    try {
      const completion = await v1.client().chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "permission write it" }] });
      assert.equal(completion.choices[0]?.message.content, "outcome: selected allow_once");
    } finally {
      await v1.close();
    }
  });

  it("a value that is not a policy → serve refuses to start, naming the variable, before anything runs", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-v1-env-"));
    process.env[V1_PERMISSIONS_ENV] = "sometimes";
    try {
      await assert.rejects(
        serve({ host: "127.0.0.1", port: 0, agents: [], tokens: [TOKEN], auth: true, dataDir, allowedOrigins: [], log: () => undefined }),
        /ACP_REMOTE_V1_PERMISSIONS must be one of editor, allow, reject, not "sometimes"/,
      );
    } finally {
      delete process.env[V1_PERMISSIONS_ENV];
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a job whose model is gone after a restart", () => {
  it("answers once 500 backend_error naming the model (not a 404, which would read as an unknown id), then 404", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-v1-renamed-"));
    try {
      const first = await startV1({ dataDir });
      const id = await submit(first.client(), "slow 60000");
      await first.jobReached(id, "running");
      await first.close();
      const second = await startV1({ dataDir, agents: [fixtureAgent("renamed")] });
      try {
        const client = second.client();
        const error = await pollDeferredFailure(client, id);
        assert.ok(error instanceof APIError);
        assert.equal(error.status, 500);
        assert.equal(error.code, "backend_error");
        assert.match(error.message, /"fixture" is no longer served/);
        await assert.rejects(client.get(`/chat/deferred-completion/${id}`), NotFoundError);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("ready → 24 hours pass → discarded (injected clock, spec: Limits 2)", () => {
  const clock = new ManualClock();
  let v1: V1Harness;
  let client: OpenAI;
  before(async () => ({ v1, client } = await startWithClient({ clock: clock.read })));
  after(() => v1.close());

  it("a result fetched 1 ms before 24 hours → 200", async () => {
    const id = await submit(client, "echo just in time");
    await v1.jobReached(id, "done");
    clock.advance(DAY_MS - 1);
    assert.equal((await pollDeferred(client, id)).status, 200);
  });

  it("a result not fetched for 24 hours → 404", async () => {
    const id = await submit(client, "echo too late");
    await v1.jobReached(id, "done");
    clock.advance(DAY_MS);
    await assert.rejects(client.get(`/chat/deferred-completion/${id}`), NotFoundError);
  });
});
