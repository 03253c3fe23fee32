// Requests the front door refuses before routing (Origin, Host) are answered
// in the format of the route they were meant for: OpenAI-shaped on /v1,
// JSON-RPC on /acp. Real sidecar (serve()), the real `openai` client and fetch.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { PermissionDeniedError } from "openai";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";
import { fixtureAgent, TOKEN } from "./harness.ts";

const EVIL = "https://evil.example";

describe("front-door refusals speak the route's language", () => {
  let server: RunningServer;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-remote-front-door-"));
    server = await serve({ host: "127.0.0.1", port: 0, agents: [fixtureAgent()], tokens: [TOKEN], auth: true, dataDir, allowedOrigins: [], log: () => {} });
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("regression: an OpenAI client refused by the Origin check got a JSON-RPC body; it now gets 403 with an OpenAI error", async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: TOKEN, maxRetries: 0, defaultHeaders: { origin: EVIL } });
    const error = await client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo hi" }] }).then(
      () => assert.fail("the request was served"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof PermissionDeniedError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.type, "invalid_request_error");
    assert.equal(error.code, "forbidden");
    assert.match(error.message, /origin/i);
  });

  it("fetch on /v1 with a foreign Origin: 403, application/json, {error: {message, type, param, code}}", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}`, origin: EVIL } });
    assert.equal(res.status, 403);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body["jsonrpc"], undefined);
    assert.deepEqual(Object.keys(body["error"] as object).sort(), ["code", "message", "param", "type"]);
  });

  it("fetch on /acp with a foreign Origin: still 403 with a JSON-RPC error (id null)", async () => {
    const res = await fetch(`${server.url}/acp`, { method: "POST", headers: { origin: EVIL, "content-type": "application/json" }, body: "{}" });
    assert.equal(res.status, 403);
    const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number } };
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.id, null);
  });
});
