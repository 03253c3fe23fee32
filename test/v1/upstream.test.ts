// The upstream backend against a small real OpenAI-compatible server (it
// speaks the shapes of OpenAI's API on port 0), called through the sidecar
// with the `openai` client.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { APIError } from "openai";
import { NO_AGENTS, pollDeferred, pollDeferredFailure, startV1, TOKEN, type V1Harness } from "./harness.ts";

const UPSTREAM_KEY = "upstream-secret";

interface Received {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

/** An OpenAI-compatible provider: it answers "upstream says: <last message>". */
class Upstream {
  readonly received: Received[] = [];
  #server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      void this.#handle(req).then(({ status, body, sse, raw }) => {
        if (raw !== undefined) {
          res.writeHead(200, { "content-type": raw.type });
          res.end(raw.text);
          return;
        }
        if (sse) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          for (const event of sse) res.write(`data: ${JSON.stringify(event)}\n\n`);
          res.end("data: [DONE]\n\n");
          return;
        }
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  async #handle(req: IncomingMessage): Promise<{ status: number; body?: unknown; sse?: unknown[]; raw?: { type: string; text: string } }> {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    this.received.push({ path: req.url ?? "", authorization: req.headers.authorization, body });
    if (req.headers.authorization !== `Bearer ${UPSTREAM_KEY}`) {
      return { status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", param: null, code: "invalid_api_key" } } };
    }
    if (req.method === "GET" && req.url === "/v1/models") {
      return {
        status: 200,
        body: {
          object: "list",
          data: [
            { id: "up-model", object: "model", created: 1_700_000_000, owned_by: "upstream-co" },
            { id: "up-fail", object: "model", created: 1_700_000_001, owned_by: "upstream-co" },
          ],
        },
      };
    }
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      if (body["model"] === "up-fail") {
        return { status: 500, body: { error: { message: "the provider is overloaded", type: "server_error", param: null, code: null } } };
      }
      const messages = body["messages"] as Array<{ content: string }>;
      const reply = `upstream says: ${messages.at(-1)?.content}`;
      const base = { id: "chatcmpl-up-1", created: 1_700_000_100, model: "up-model" };
      const misbehaviour = MISBEHAVIOURS[messages.at(-1)?.content ?? ""];
      if (misbehaviour) return { status: 200, raw: misbehaviour(base, body["stream"] === true) };
      if (body["stream"] === true) {
        const words = reply.split(" ");
        return {
          status: 200,
          sse: [
            ...words.map((w, i) => ({
              ...base,
              object: "chat.completion.chunk",
              choices: [{ index: 0, delta: { ...(i === 0 ? { role: "assistant" } : {}), content: i === 0 ? w : ` ${w}` }, finish_reason: null }],
            })),
            { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
          ],
        };
      }
      return {
        status: 200,
        body: {
          ...base,
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
          // Reported without the details: the sidecar fills them in.
          usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
        },
      };
    }
    return { status: 404, body: { error: { message: "no such route", type: "invalid_request_error", param: null, code: null } } };
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }
}

/** Largest upstream event the sidecar under test takes, in characters. */
const MAX_EVENT_CHARS = 64 * 1024;

type Base = { id: string; created: number; model: string };
const chunk = (base: Base, content: string, finish: string | null = null): string =>
  JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
const SSE = "text/event-stream";

/** Replies that are not what they should be, by the content of the last message. */
const MISBEHAVIOURS: Record<string, (base: Base, stream: boolean) => { type: string; text: string }> = {
  // Lines ended by a bare CR, as the event-stream grammar allows.
  "cr-framing": (base) => ({ type: SSE, text: `data: ${chunk(base, "carriage")}\r\rdata: ${chunk(base, " returns", "stop")}\r\rdata: [DONE]\r\r` }),
  // One event that never ends within the bound (no line end at all).
  "long-event": (base) => ({ type: SSE, text: `data: ${chunk(base, "x".repeat(MAX_EVENT_CHARS * 2))}` }),
  "not-json": (_base, stream) =>
    stream ? { type: SSE, text: "data: this is not JSON\n\ndata: [DONE]\n\n" } : { type: "application/json", text: "<html>bad gateway</html>" },
};

/** The OpenAI error body of a failed fetch: every field present, code upstream_error. */
async function assertUpstreamError(response: Response, message: RegExp): Promise<void> {
  assert.equal(response.status, 502);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const body = (await response.json()) as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  assert.equal(body.error["code"], "upstream_error");
  assert.match(String(body.error["message"]), message);
}

describe("upstream backend (--upstream-url)", () => {
  const upstream = new Upstream();
  let v1: V1Harness;

  before(async () => {
    await upstream.start();
    v1 = await startV1({ runner: NO_AGENTS, upstream: { url: upstream.url, apiKey: UPSTREAM_KEY }, limits: { upstreamMaxEventChars: MAX_EVENT_CHARS } });
  });
  after(async () => {
    await v1.close();
    await upstream.close();
  });

  it("GET /v1/models passes the provider's models through", async () => {
    const models = await v1.client().models.list();
    assert.deepEqual(
      models.data.map((m) => ({ id: m.id, owned_by: m.owned_by, created: m.created })),
      [
        { id: "up-model", owned_by: "upstream-co", created: 1_700_000_000 },
        { id: "up-fail", owned_by: "upstream-co", created: 1_700_000_001 },
      ],
    );
    assert.equal(upstream.received.at(-1)?.authorization, `Bearer ${UPSTREAM_KEY}`);
  });

  it("a plain completion is passed through, with the usage details and fingerprint the provider left out filled in", async () => {
    const completion = await v1.client().chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "hello" }] });
    assert.equal(completion.id, "chatcmpl-up-1");
    assert.equal(completion.choices[0]?.message.content, "upstream says: hello");
    assert.equal(completion.choices[0]?.message.refusal, null);
    assert.equal(completion.choices[0]?.finish_reason, "stop");
    assert.equal(completion.system_fingerprint, "upstream");
    assert.deepEqual(completion.usage, {
      prompt_tokens: 7,
      completion_tokens: 3,
      total_tokens: 10,
      prompt_tokens_details: { text_tokens: 7, audio_tokens: 0, image_tokens: 0, cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      num_sources_used: 0,
    });
  });

  it("a deferred completion runs on the provider without the deferred flag, and is fetched once", async () => {
    const client = v1.client();
    const { request_id } = (await client.post("/chat/completions", {
      body: { model: "up-model", messages: [{ role: "user", content: "later" }], deferred: true, temperature: 0.5 },
    })) as { request_id: string };
    const got = await pollDeferred(client, request_id);
    assert.equal(got.status, 200);
    assert.equal((got.body as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "upstream says: later");
    const sent = upstream.received.filter((r) => r.path === "/v1/chat/completions").at(-1)!;
    assert.equal("deferred" in sent.body, false);
    assert.equal(sent.body["stream"], false);
    assert.equal(sent.body["temperature"], 0.5, "other fields pass through");
    await assert.rejects(client.get(`/chat/deferred-completion/${request_id}`), (e: unknown) => e instanceof APIError && e.status === 404);
  });

  it("stream: true relays the provider's chunks and ends with [DONE]", async () => {
    const stream = await v1.client().chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "a b c" }], stream: true });
    let text = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, "upstream says: a b c");
    assert.equal(finish, "stop");
  });

  const post = (content: string, stream: boolean): Promise<Response> =>
    fetch(`${v1.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up-model", messages: [{ role: "user", content }], stream }),
    });

  it("regression: a provider stream framed with bare CR line ends was never split; its events are now relayed", async () => {
    const stream = await v1.client().chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "cr-framing" }], stream: true });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    assert.equal(text, "carriage returns");
  });

  it("regression: an over-long provider event grew the sidecar's buffer without bound; it now fails the completion with 502 and an OpenAI error", async () => {
    await assertUpstreamError(await post("long-event", true), /longer than 65536 characters/);
    await assert.rejects(
      v1.client().chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "long-event" }], stream: true }),
      (e: unknown) => e instanceof APIError && e.status === 502 && e.code === "upstream_error",
    );
  });

  it("regression: a provider data line that is not JSON answered 500; it is now a 502 (stream and plain)", async () => {
    await assertUpstreamError(await post("not-json", true), /not JSON: this is not JSON/);
    await assertUpstreamError(await post("not-json", false), /not JSON: <html>/);
  });

  it("a deferred job the provider fails answers 502 with the provider's message once, then 404", async () => {
    const client = v1.client();
    const { request_id } = (await client.post("/chat/completions", {
      body: { model: "up-fail", messages: [{ role: "user", content: "x" }], deferred: true },
    })) as { request_id: string };
    const error = await pollDeferredFailure(client, request_id);
    assert.ok(error instanceof APIError);
    assert.equal(error.status, 502);
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, /The upstream provider answered 500: the provider is overloaded/);
    await assert.rejects(client.get(`/chat/deferred-completion/${request_id}`), (e: unknown) => e instanceof APIError && e.status === 404);
  });
});

describe("upstream key set by the editor (setUpstreamKey)", () => {
  const upstream = new Upstream();
  let v1: V1Harness;

  before(async () => {
    await upstream.start();
    v1 = await startV1({ runner: NO_AGENTS, upstream: { url: upstream.url, apiKey: "wrong" } });
  });
  after(async () => {
    await v1.close();
    await upstream.close();
  });

  it("with a wrong key the models are not listed and the model is unknown; after setUpstreamKey they are", async () => {
    const client = v1.client();
    assert.deepEqual((await client.models.list()).data, []);
    await assert.rejects(
      client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "x" }] }),
      (e: unknown) => e instanceof APIError && e.status === 502 && /Incorrect API key/.test(e.message),
    );
    v1.route.setUpstreamKey(UPSTREAM_KEY);
    assert.deepEqual((await client.models.list()).data.map((m) => m.id), ["up-model", "up-fail"]);
    const completion = await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "now" }] });
    assert.equal(completion.choices[0]?.message.content, "upstream says: now");
  });
});
