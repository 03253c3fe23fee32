// Interop with published ACP agents: each runs as the agent of a real
// `acp-remote serve` (in this process, on port 0), and the SDK's own client
// talks to it over Streamable HTTP or WebSocket: initialize, authenticate
// where the agent needs it, session/new, session/list, then a prompt that
// fails without a network. The remote client must see the agent's own error,
// and the session must survive it. The agents are installed (exact versions,
// one npm install) into the test cache, not the project; an agent whose
// package cannot be installed on this machine is skipped with the reason.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { client, methods, PROTOCOL_VERSION, type ClientContext, type SessionNotification, type Stream } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { serve } from "../../sidecar/server/serve.ts";
import { ensureCachedPackages, type CachedPackages } from "../helpers/npm-cache-install.ts";
import { isolatedHome, pinnedPackages, PUBLISHED_AGENTS, type PublishedAgent } from "./published-agents.ts";
import { REFUSAL, startRefusingModelApi, type RefusingModelApi } from "./refusing-model-api.ts";

const TOKEN = "interop-agents-token-0123456789";
/** One agent's whole run: start, five requests, stop. */
const AGENT_TEST_TIMEOUT_MS = 120_000;

let cache: CachedPackages;
let api: RefusingModelApi;
const cleanups: Array<() => Promise<void> | void> = [];

before(async () => {
  cache = ensureCachedPackages("interop-agents", pinnedPackages(), (line) => process.stderr.write(`[interop] ${line}\n`));
  api = await startRefusingModelApi();
}, { timeout: 20 * 60_000 });

after(async () => {
  for (const c of cleanups.reverse()) await c();
  await api?.close();
});

type Transport = "http" | "websocket";

function stream(url: string, transport: Transport): Stream {
  if (transport === "http") return createHttpStream(`${url}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return createWebSocketStream(`${url.replace(/^http/, "ws")}/acp`, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } }) as Stream;
}

/** A served agent and one SDK client connection to it. */
async function serveAgent(agent: PublishedAgent, transport: Transport) {
  const root = mkdtempSync(join(tmpdir(), `acp-interop-${agent.registryId}-`));
  const { home, env } = isolatedHome(root);
  const cwd = join(root, "project");
  mkdirSync(cwd);
  const logs: string[] = [];
  const server = await serve({
    host: "127.0.0.1",
    port: 0,
    agents: [{ name: agent.registryId, command: join(cache.bin, agent.bin), args: agent.args, env: { ...env, ...agent.env(api.url, home) } }],
    tokens: [TOKEN],
    auth: true,
    dataDir: join(root, "data"),
    allowedOrigins: [],
    log: (line) => logs.push(line),
  });
  const updates: SessionNotification[] = [];
  let ready: (ctx: ClientContext) => void = () => {};
  const context = new Promise<ClientContext>((resolve) => (ready = resolve));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const closed = client({ name: "interop-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }))
    .connectWith(stream(server.url, transport), async (ctx) => {
      ready(ctx);
      await held;
    })
    .catch(() => undefined);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    release();
    await closed;
    await server.close();
    rmSync(root, { recursive: true, force: true });
  };
  cleanups.push(stop);
  return { ctx: await context, server, cwd, updates, logs, stop };
}

/** The error a rejected request carried, as text: code, message and data. */
async function failure(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; data?: unknown };
    return JSON.stringify({ code: e.code, message: e.message, data: e.data });
  }
  assert.fail("the request succeeded; it was expected to fail");
}

for (const [i, agent] of PUBLISHED_AGENTS.entries()) {
  const transport: Transport = i % 2 === 0 ? "http" : "websocket";
  describe(`${agent.pkg}@${agent.version} behind acp-remote serve`, () => {
    test(`over ${transport}: initialize, ${agent.authMethod ? "authenticate, " : ""}session/new, session/list, a prompt that fails offline and the session after it`, { timeout: AGENT_TEST_TIMEOUT_MS }, async (t) => {
      const missing = cache.missing.get(agent.pkg);
      if (missing !== undefined) {
        process.stderr.write(`[interop] skipping ${agent.pkg}: it cannot be installed here: ${missing}\n`);
        t.skip(`${agent.pkg} cannot be installed on this machine: ${missing}`);
        return;
      }
      const { ctx, server, cwd, logs, stop } = await serveAgent(agent, transport);
      const context = (): string => `\nlog:\n${logs.slice(-20).join("\n")}`;
      const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      assert.equal(init.agentInfo?.name, agent.agentName, context());
      assert.ok((init.authMethods ?? []).length > 0, "a registry agent announces how to authenticate");
      if (agent.authMethod !== undefined) {
        assert.ok(init.authMethods?.some((m) => m.id === agent.authMethod), `${agent.authMethod} among ${JSON.stringify(init.authMethods)}`);
        await ctx.request(methods.agent.authenticate, { methodId: agent.authMethod });
      }
      const created = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
      assert.equal(typeof created.sessionId, "string", context());
      const listed = await ctx.request(methods.agent.session.list, {});
      assert.ok(listed.sessions.some((s) => s.sessionId === created.sessionId && s.cwd === cwd), JSON.stringify(listed));
      assert.equal(server.hub.status().sessions.find((s) => s.sessionId === created.sessionId)?.agent, agent.registryId);

      const prompt = () => ctx.request(methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: "text", text: "Say hello" }] });
      // The agent's own error (its model API refused it) reaches the remote client.
      const first = await failure(prompt());
      assert.ok(first.includes(REFUSAL), `the agent's error reaches the client: ${first}${context()}`);
      // The session survives: the agent still has it, and answers on it.
      const second = await failure(prompt());
      assert.ok(second.includes(REFUSAL) || second === first, `the second prompt reaches the agent again: ${second}`);
      if (created.modes) {
        await ctx.request(methods.agent.session.setMode, { sessionId: created.sessionId, modeId: created.modes.currentModeId });
      } else if (created.configOptions?.[0]?.type === "select") {
        const option = created.configOptions[0];
        await ctx.request(methods.agent.session.setConfigOption, { sessionId: created.sessionId, configId: option.id, value: option.currentValue });
      }
      assert.ok(api.requests.length > 0, "the agent called its model API");
      await stop();
    });
  });
}
