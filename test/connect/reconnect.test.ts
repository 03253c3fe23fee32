// Reconnect (spec: v1 durability, rule 7): the network drops mid-session and
// the editor's session goes on. The connect child talks to the SDK AcpServer
// through a TCP proxy that the tests cut; the SDK agent keeps its sessions
// across connections, so `session/load` on the new connection resumes them.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { methods, PROTOCOL_VERSION, type ClientContext } from "@agentclientprotocol/sdk";
import { agentText, asEditor, spawnConnect, waitFor, type ConnectChild, type EditorLog } from "../helpers/connect-child.ts";
import { createSdkAgent } from "../helpers/sdk-agent.ts";
import { startSdkServer, type SdkServer } from "../helpers/sdk-server.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function setup(transport: "http" | "ws", args: string[] = [], loadSession = true): Promise<{ server: SdkServer; proxy: TcpProxy; c: ConnectChild }> {
  // HTTP/1.1 carries both profiles, so one server flavour serves both rows.
  const server = await startSdkServer("http1", { agent: createSdkAgent({ loadSession }) });
  const proxy = await startTcpProxy(server.port);
  const c = spawnConnect([`http://127.0.0.1:${proxy.port}/acp`, "--transport", transport, ...args]);
  cleanups.push(() => server.close(), () => proxy.close(), () => c.kill());
  return { server, proxy, c };
}

async function openSession(ctx: ClientContext): Promise<string> {
  await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/work", mcpServers: [] });
  return sessionId;
}

function prompt(ctx: ClientContext, sessionId: string, text: string) {
  return ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

for (const transport of ["http", "ws"] as const) {
  describe(`reconnect over --transport ${transport}`, () => {
    test("connection cut mid-session: the next prompt succeeds on the same session, history intact, replay not shown twice", async () => {
      const { proxy, c } = await setup(transport);
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        assert.equal((await prompt(ctx, sessionId, "echo one")).stopReason, "end_turn");
        const before = log.updates.length;
        proxy.cut();
        await c.waitForLog("reconnected");
        const next = await prompt(ctx, sessionId, "history");
        assert.equal(next.stopReason, "end_turn");
        // The agent still has the first prompt: same session, history intact.
        assert.equal(agentText(log, sessionId), "oneecho one | history");
        // The replay of session/load did not reach the editor a second time:
        // only the new prompt's two updates were added.
        assert.equal(log.updates.length, before + 2);
      });
      assert.equal(await c.exited, 0);
      assert.match(c.stderr(), /connection lost: .*; reconnecting/);
    });

    test("a request in flight when the connection drops fails with a JSON-RPC error; the session goes on", async () => {
      const { proxy, c } = await setup(transport);
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        const waiting = prompt(ctx, sessionId, "wait");
        // The prompt has reached the agent once its user message came back.
        await waitFor(() => log.updates.some((u) => u.update.sessionUpdate === "user_message_chunk"), "the prompt to reach the agent");
        proxy.cut();
        await assert.rejects(waiting, (error: Error) => {
          assert.match(error.message, /connection to the server was lost.*not replayed/);
          return true;
        });
        await c.waitForLog("reconnected");
        await ctx.notify(methods.agent.session.cancel, { sessionId });
        assert.equal((await prompt(ctx, sessionId, "echo after")).stopReason, "end_turn");
        assert.match(agentText(log, sessionId), /after$/);
      });
      assert.equal(await c.exited, 0);
    });

    test("what the editor sends while the server is unreachable is held and sent after the reconnect", async () => {
      const { proxy, c } = await setup(transport);
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        proxy.block();
        proxy.cut();
        await c.waitForLog("reconnect attempt 1 failed");
        const held = prompt(ctx, sessionId, "echo held");
        proxy.unblock();
        assert.equal((await held).stopReason, "end_turn");
        assert.equal(agentText(log, sessionId), "held");
      });
      assert.equal(await c.exited, 0);
    });

    test("reconnecting gives up after --reconnect-timeout: held requests fail, stderr says why, exit code 1", async () => {
      const { proxy, c } = await setup(transport, ["--reconnect-timeout", "1"]);
      const log: EditorLog = { updates: [], permissions: [] };
      const stdinOpen = asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        proxy.block();
        proxy.cut();
        await c.waitForLog("reconnecting");
        await assert.rejects(prompt(ctx, sessionId, "echo never"), /gave up reconnecting/);
      });
      assert.equal(await c.exited, 1);
      await stdinOpen;
      assert.match(c.stderr(), /giving up: the server stayed unreachable/);
    });
  });
}

test("server restarted on the same port (it no longer knows the connection): connect reconnects and loads the session", async () => {
  const first = await startSdkServer("h2c");
  const c = spawnConnect([first.url, "--transport", "http"]);
  cleanups.push(() => c.kill());
  const log: EditorLog = { updates: [], permissions: [] };
  await asEditor(c, log, async (ctx) => {
    const sessionId = await openSession(ctx);
    await prompt(ctx, sessionId, "echo before restart");
    await first.close();
    // Same agent (it keeps its sessions, as a server with a store does), new server transport.
    const second = await startSdkServer("h2c", { agent: first.agent }, first.port);
    cleanups.push(() => second.close());
    await c.waitForLog("reconnected");
    assert.equal((await prompt(ctx, sessionId, "history")).stopReason, "end_turn");
    assert.equal(agentText(log, sessionId), "before restartecho before restart | history", c.stderr());
  });
  assert.equal(await c.exited, 0);
});

test("an agent that cannot load sessions: after the reconnect, stderr says the editor's sessions are gone", async () => {
  const { proxy, c } = await setup("http", [], false);
  const log: EditorLog = { updates: [], permissions: [] };
  await asEditor(c, log, async (ctx) => {
    await openSession(ctx);
    proxy.cut();
    await c.waitForLog("reconnected");
  });
  assert.equal(await c.exited, 0);
  assert.match(c.stderr(), /the server's agent cannot load sessions; 1 open session\(s\) are gone/);
});
