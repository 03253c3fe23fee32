// Bad input on /v1: each row of the table is a body or request and the status
// and `param` it gets (design: Deferred completions, decision 1), and the
// rate limit shared by deferred and plain completions (spec: Limits 3).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI, { RateLimitError } from "openai";
import { ManualClock, OTHER_TOKEN, startV1, TOKEN, type V1Harness } from "./harness.ts";

const user = [{ role: "user", content: "echo ok" }];

interface ErrorJson {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function post(v1: V1Harness, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: ErrorJson; headers: Headers }> {
  const response = await fetch(`${v1.baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, json: (await response.json()) as ErrorJson, headers: response.headers };
}

describe("validation table: each bad body → its status and param", () => {
  let v1: V1Harness;
  before(async () => {
    v1 = await startV1({ limits: { maxBodyBytes: 4096 } });
  });
  after(() => v1.close());

  const rows: Array<[string, unknown, number, string | null]> = [
    ["a JSON array instead of an object", [], 400, null],
    ["no model", { messages: user }, 400, "model"],
    ["model not a string", { model: 5, messages: user }, 400, "model"],
    ["no messages", { model: "fixture" }, 400, "messages"],
    ["messages not an array", { model: "fixture", messages: "hi" }, 400, "messages"],
    ["messages empty", { model: "fixture", messages: [] }, 400, "messages"],
    ["a message that is not an object", { model: "fixture", messages: ["hi"] }, 400, "messages[0]"],
    ["an unknown role", { model: "fixture", messages: [{ role: "robot", content: "x" }] }, 400, "messages[0].role"],
    ["no content", { model: "fixture", messages: [{ role: "user" }] }, 400, "messages[0].content"],
    ["content a number", { model: "fixture", messages: [{ role: "user", content: 5 }] }, 400, "messages[0].content"],
    [
      "an image part",
      { model: "fixture", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
      400,
      "messages[0].content[0].type",
    ],
    ["a text part without text", { model: "fixture", messages: [{ role: "user", content: [{ type: "text" }] }] }, 400, "messages[0].content[0].text"],
    ["the second message bad", { model: "fixture", messages: [...user, { role: "user", content: null }] }, 400, "messages[1].content"],
    ["deferred not a boolean", { model: "fixture", messages: user, deferred: "yes" }, 400, "deferred"],
    ["stream not a boolean", { model: "fixture", messages: user, stream: 1 }, 400, "stream"],
    ["deferred and stream together", { model: "fixture", messages: user, deferred: true, stream: true }, 400, "stream"],
    ["n other than 1", { model: "fixture", messages: user, n: 2 }, 400, "n"],
    ["include_usage not a boolean", { model: "fixture", messages: user, stream_options: { include_usage: "x" } }, 400, "stream_options.include_usage"],
    ["an unknown model", { model: "nope", messages: user }, 404, "model"],
    ["an unknown model, deferred", { model: "nope", messages: user, deferred: true }, 404, "model"],
  ];
  for (const [name, body, status, param] of rows) {
    it(`${name} → ${status}, param ${param ?? "null"}`, async () => {
      const got = await post(v1, JSON.stringify(body));
      assert.equal(got.status, status);
      assert.equal(got.json.error.param, param);
      assert.equal(got.json.error.type, "invalid_request_error");
      assert.ok(got.json.error.message.length > 0);
    });
  }

  it("a body that is not JSON → 400, code invalid_json", async () => {
    const got = await post(v1, "{not json");
    assert.equal(got.status, 400);
    assert.equal(got.json.error.code, "invalid_json");
  });

  it("Content-Type text/plain → 415", async () => {
    const got = await post(v1, JSON.stringify({ model: "fixture", messages: user }), { "content-type": "text/plain" });
    assert.equal(got.status, 415);
    assert.equal(got.json.error.code, "unsupported_media_type");
  });

  it("a body over the limit → 413", async () => {
    const got = await post(v1, JSON.stringify({ model: "fixture", messages: [{ role: "user", content: "x".repeat(5000) }] }));
    assert.equal(got.status, 413);
    assert.equal(got.json.error.code, "request_too_large");
  });

  it("a chunked body over the limit (no Content-Length) → 413", async () => {
    const big = new TextEncoder().encode(JSON.stringify({ model: "fixture", messages: [{ role: "user", content: "x".repeat(5000) }] }));
    const response = await fetch(`${v1.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(big);
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    assert.equal(response.status, 413);
  });

  for (const [method, path, allow] of [
    ["GET", "/chat/completions", "POST"],
    ["PUT", "/chat/deferred-completion/x", "GET, DELETE"],
    ["POST", "/models", "GET"],
  ] as const) {
    it(`${method} ${path} → 405 with Allow: ${allow}`, async () => {
      const response = await fetch(`${v1.baseURL}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get("allow"), allow);
      assert.equal(((await response.json()) as ErrorJson).error.code, "method_not_allowed");
    });
  }

  it("a request_id with a malformed escape → 404, not 500", async () => {
    const response = await fetch(`${v1.baseURL}/chat/deferred-completion/%E0%A4%A`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.status, 404);
  });

  it("an unknown path under /v1 → 404", async () => {
    const response = await fetch(`${v1.baseURL}/embeddings`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as ErrorJson).error.code, "unknown_url");
  });
});

describe("rate limit per key, the same for deferred and plain completions (spec: Limits 3)", () => {
  const clock = new ManualClock();
  let v1: V1Harness;
  before(async () => {
    v1 = await startV1({ clock: clock.read, limits: { ratePerMinute: 3 } });
  });
  after(() => v1.close());

  it("over the limit → 429 with Retry-After (RateLimitError), for both kinds; other keys unaffected; it refills with time", async () => {
    const client = v1.client();
    await client.post("/chat/completions", { body: { model: "fixture", messages: user, deferred: true } });
    await client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo ok" }] });
    await client.post("/chat/completions", { body: { model: "fixture", messages: user, deferred: true } });
    for (const body of [
      { model: "fixture", messages: user, deferred: true },
      { model: "fixture", messages: user },
    ]) {
      const got = await post(v1, JSON.stringify(body));
      assert.equal(got.status, 429);
      assert.equal(got.json.error.code, "rate_limit_exceeded");
      // 3 a minute: the next request is allowed 20 seconds later.
      assert.equal(got.headers.get("retry-after"), "20");
    }
    await assert.rejects(client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo ok" }] }), RateLimitError);
    const other = new OpenAI({ apiKey: OTHER_TOKEN, baseURL: v1.baseURL, maxRetries: 0 });
    assert.equal((await other.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo other" }] })).choices[0]?.message.content, "other");
    clock.advance(20_000);
    assert.equal((await client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo again" }] })).choices[0]?.message.content, "again");
  });
});
