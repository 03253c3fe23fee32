// /v1 as `serve()` mounts it beside /acp on the sidecar's one port: the
// deferred flow with the openai client (HTTP/1.1), and the same route over
// cleartext HTTP/2 with curl.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { NotFoundError } from "openai";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";
import { curlH2c, fixtureAgent, pollDeferred } from "./harness.ts";

const TOKEN = "serve-test-token-0123456789abcdef";

describe("serve() mounts /v1", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-serve-v1-"));
  let server: RunningServer;
  let client: OpenAI;
  before(async () => {
    server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [fixtureAgent()],
      tokens: [TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: () => {},
    });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${server.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("openai client: deferred → request_id, polled until 200, then NotFoundError", async () => {
    const { request_id } = (await client.post("/chat/completions", {
      body: { model: "fixture", messages: [{ role: "user", content: "think first\necho through serve" }], deferred: true },
    })) as { request_id: string };
    const got = await pollDeferred(client, request_id);
    assert.equal(got.status, 200);
    const body = got.body as { id: string; choices: Array<{ message: { content: string; reasoning_content?: string } }> };
    assert.equal(body.id, request_id);
    assert.deepEqual([body.choices[0]?.message.content, body.choices[0]?.message.reasoning_content], ["through serve", "first"]);
    await assert.rejects(client.get(`/chat/deferred-completion/${request_id}`), NotFoundError);
  });

  it("curl over h2c: GET /v1/models lists the agent", async () => {
    const got = await curlH2c([`${server.url}/v1/models`], TOKEN);
    assert.equal(got.status, 200);
    assert.equal(got.version, "2");
    assert.deepEqual((JSON.parse(got.body) as { data: Array<{ id: string }> }).data.map((m) => m.id), ["fixture"]);
  });

  it("without an upstream provider there is no setUpstreamKey (the control server answers Unsupported)", () => {
    assert.equal(server.setUpstreamKey, undefined);
  });
});
