// Cookies (spec: "What the service does", rule 6) and credentials (design:
// decision 8) as the server sees them: a cookie set by the server comes back on
// every later request and on the WebSocket upgrade, for the life of the
// connection and across a reconnect; the bearer token rides on all of them,
// and so does the negotiated Acp-Protocol-Version after initialize.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { asEditor, spawnConnect, type EditorLog } from "../helpers/connect-child.ts";
import { startSdkServer, type SdkServer } from "../helpers/sdk-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { testCert } from "../helpers/tls-cert.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const COOKIE = { name: "affinity", value: "node-7" };
const TOKEN = "s3cret-token";

async function server(profile: "h2" | "http1"): Promise<SdkServer> {
  const s = await startSdkServer(profile, { cookie: COOKIE, token: TOKEN });
  cleanups.push(() => s.close());
  return s;
}

describe("cookies set by the server come back", () => {
  test("Streamable HTTP over h2: every request after initialize carries the cookie and the token", async () => {
    const s = await server("h2");
    const { certFile } = await testCert();
    const c = spawnConnect([s.url, "--transport", "http", "--ca", certFile, "--token", TOKEN]);
    cleanups.push(() => c.kill());
    const log: EditorLog = { updates: [], permissions: [] };
    await asEditor(c, log, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
      await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Write file" }] });
    });
    assert.equal(await c.exited, 0);
    const [first, ...later] = s.requests;
    assert.equal(first?.method, "POST");
    assert.equal(first?.cookie, undefined, "nothing to send before the server set it");
    // POST session/new, GET streams, POST prompt, POST permission answer, DELETE.
    assert.ok(later.length >= 6, `only ${later.length} requests after initialize`);
    for (const r of later) assert.equal(r.cookie, `${COOKIE.name}=${COOKIE.value}`, `${r.method} without the cookie`);
    // Spec, Versioning 2: the negotiated version on every request after initialization.
    assert.equal(first?.protocolVersion, undefined);
    for (const r of later) assert.equal(r.protocolVersion, String(PROTOCOL_VERSION), `${r.method} without Acp-Protocol-Version`);
    for (const r of s.requests) assert.equal(r.authorization, `Bearer ${TOKEN}`);
    assert.ok(later.some((r) => r.method === "DELETE"));
  });

  for (const transport of ["http", "ws"] as const) {
    test(`--transport ${transport}: the cookie of the first connection comes back on the reconnect${transport === "ws" ? " upgrade" : ""}`, async () => {
      const s = await server("http1");
      const proxy = await startTcpProxy(s.port);
      cleanups.push(() => proxy.close());
      const c = spawnConnect([`http://127.0.0.1:${proxy.port}/acp`, "--transport", transport], { ACP_REMOTE_TOKEN: TOKEN });
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
        proxy.cut();
        await c.waitForLog("reconnected");
        await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo again" }] });
      });
      assert.equal(await c.exited, 0);
      const opening = transport === "ws" ? s.requests.filter((r) => r.upgrade) : s.requests.filter((r) => r.method === "POST" && r.connectionId === undefined);
      assert.equal(opening.length, 2, "two connections: the first and the reconnect");
      assert.equal(opening[0]?.cookie, undefined);
      assert.equal(opening[1]?.cookie, `${COOKIE.name}=${COOKIE.value}`);
      for (const r of s.requests) assert.equal(r.authorization, `Bearer ${TOKEN}`);
    });
  }
});

describe("bad credentials", () => {
  for (const transport of ["http", "ws", "auto"] as const) {
    test(`wrong token, --transport ${transport}: JSON-RPC error to the editor's initialize, clear stderr, exit code 3`, async () => {
      const s = await server("http1");
      const c = spawnConnect([s.url, "--transport", transport, "--token", "wrong"]);
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        await assert.rejects(ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }), (error: Error & { code?: number }) => {
          assert.equal(error.code, -32000);
          assert.match(error.message, /HTTP 401/);
          return true;
        });
      });
      assert.equal(await c.exited, 3);
      assert.match(c.stderr(), /cannot connect to .*HTTP 401.*pass --token or set ACP_REMOTE_TOKEN/);
    });
  }
});
