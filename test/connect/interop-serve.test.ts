// Interop matrix, part 2: `acp-remote connect` against `acp-remote serve`
// (both real child processes), the fixture agent behind the server, the
// editor played by the ACP SDK's client. One case per row: server flavour ×
// --transport. Then a reconnect through a TCP proxy that is cut mid-session.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type ClientContext } from "@agentclientprotocol/sdk";
import { agentText, asEditor, spawnConnect, waitFor, type EditorLog } from "../helpers/connect-child.ts";
import { NODE } from "../helpers/connect-child.ts";
import { FIXTURE_AGENT, spawnServe, type ServeChild } from "../helpers/serve-child.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

const TOKEN = "interop-token-0123456789";
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const servers = new Map<string, Promise<ServeChild>>();
/** One server per flavour, shared by its rows. */
function server(tls: boolean): Promise<ServeChild> {
  const k = tls ? "tls" : "cleartext";
  let s = servers.get(k);
  if (s === undefined) {
    // A second agent, so that --agent has something to choose.
    s = spawnServe({ token: TOKEN, tls, moreAgents: [`second=${NODE} ${FIXTURE_AGENT}`] });
    servers.set(k, s);
    cleanups.push(async () => (await s!).close());
  }
  return s;
}

async function openSession(ctx: ClientContext): Promise<string> {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  assert.equal(init.agentInfo?.name, "fixture-agent");
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  return sessionId;
}

function prompt(ctx: ClientContext, sessionId: string, text: string) {
  return ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

interface Row {
  tls: boolean;
  transport: "http" | "ws" | "auto";
  protocol: "h2" | "websocket";
}

const rows: Row[] = [
  { tls: false, transport: "http", protocol: "h2" },
  { tls: false, transport: "auto", protocol: "h2" },
  { tls: false, transport: "ws", protocol: "websocket" },
  { tls: true, transport: "http", protocol: "h2" },
  { tls: true, transport: "auto", protocol: "h2" },
  { tls: true, transport: "ws", protocol: "websocket" },
];

describe("connect ↔ acp-remote serve", () => {
  for (const row of rows) {
    test(`${row.tls ? "TLS (h2 via ALPN)" : "cleartext (h2c)"} server, --transport ${row.transport}: prompt and permission over ${row.protocol}`, async () => {
      const s = await server(row.tls);
      const tlsArgs = row.tls ? ["--ca", join(s.dataDir, "tls-cert.pem")] : [];
      const c = spawnConnect([s.url, "--transport", row.transport, ...tlsArgs], { ACP_REMOTE_TOKEN: TOKEN });
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      const sessionId = await asEditor(c, log, async (ctx) => {
        const id = await openSession(ctx);
        assert.equal((await prompt(ctx, id, "echo hello from afar")).stopReason, "end_turn");
        assert.equal((await prompt(ctx, id, "permission Edit main.ts")).stopReason, "end_turn");
        return id;
      });
      assert.equal(agentText(log, sessionId), "hello from afaroutcome: selected allow_once");
      assert.deepEqual(log.permissions, ["Edit main.ts"]);
      assert.equal(await c.exited, 0);
      assert.match(c.stderr(), new RegExp(`over ${row.protocol}`));
    });
  }

  test("--agent NAME picks the server's agent: each name reaches its own agent process", async () => {
    const s = await server(false);
    const pidOf = async (agent: string | undefined): Promise<string> => {
      const c = spawnConnect([s.url, "--token", TOKEN, ...(agent === undefined ? [] : ["--agent", agent])]);
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      const sessionId = await asEditor(c, log, async (ctx) => {
        const id = await openSession(ctx);
        await prompt(ctx, id, "pid");
        return id;
      });
      assert.equal(await c.exited, 0);
      const text = agentText(log, sessionId);
      assert.match(text, /^pid: \d+$/);
      return text;
    };
    const byDefault = await pidOf(undefined);
    const first = await pidOf("fixture");
    const second = await pidOf("second");
    assert.equal(first, byDefault, "the first --agent of serve is its default");
    assert.notEqual(second, first);
  });

  for (const transport of ["http", "ws"] as const) {
    test(`--transport ${transport}: connection cut mid-session, the next prompt goes on in the same session`, async () => {
      const s = await server(false);
      const proxy = await startTcpProxy(s.port);
      cleanups.push(() => proxy.close());
      const c = spawnConnect([`http://127.0.0.1:${proxy.port}`, "--transport", transport, "--token", TOKEN]);
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        // Three chunks live; the server's journal merges them into one for its replay.
        await prompt(ctx, sessionId, "echo one\necho two\necho three");
        const before = log.updates.length;
        proxy.cut();
        await c.waitForLog("reconnected");
        assert.equal((await prompt(ctx, sessionId, "echo second")).stopReason, "end_turn");
        assert.equal(agentText(log, sessionId), "onetwothreesecond");
        // The server's replay of the session was not shown a second time.
        const added = log.updates.slice(before).filter((u) => u.update.sessionUpdate === "agent_message_chunk");
        assert.equal(added.length, 1);
      });
      assert.equal(await c.exited, 0);
    });
  }

  test("a prompt running when the connection drops: the editor gets an error at once, and then what the agent said while it was away", async () => {
    const s = await server(false);
    const proxy = await startTcpProxy(s.port);
    cleanups.push(() => proxy.close());
    const c = spawnConnect([`http://127.0.0.1:${proxy.port}`, "--token", TOKEN]);
    cleanups.push(() => c.kill());
    const log: EditorLog = { updates: [], permissions: [] };
    await asEditor(c, log, async (ctx) => {
      const sessionId = await openSession(ctx);
      const running = prompt(ctx, sessionId, "echo start\nslow 1500\necho late");
      await waitFor(() => agentText(log, sessionId) === "start", "the first words of the turn");
      proxy.cut();
      await assert.rejects(running, /connection to the server was lost/);
      // The session went on on the server; its reply reaches the editor.
      await waitFor(() => agentText(log, sessionId).endsWith("late"), "what the agent said while the editor was away");
      assert.equal(agentText(log, sessionId), "startlate");
      assert.equal((await prompt(ctx, sessionId, "echo next")).stopReason, "end_turn");
      assert.equal(agentText(log, sessionId), "startlatenext");
    });
    assert.equal(await c.exited, 0);
  });

  for (const transport of ["http", "ws"] as const) {
    test(`--transport ${transport}: a permission question open when the connection drops is cancelled in the editor, asked again, and the answer counts`, async () => {
      const s = await server(false);
      const proxy = await startTcpProxy(s.port);
      cleanups.push(() => proxy.close());
      const c = spawnConnect([`http://127.0.0.1:${proxy.port}`, "--token", TOKEN, "--transport", transport]);
      cleanups.push(() => c.kill());
      const asks: Array<{ cancelled: boolean }> = [];
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const log: EditorLog = { updates: [], permissions: [] };
      const editor = client({ name: "slow-editor" })
        .onNotification(methods.client.session.update, ({ params }) => {
          log.updates.push(params);
        })
        .onRequest(methods.client.session.requestPermission, async ({ signal }) => {
          const ask = { cancelled: false };
          asks.push(ask);
          signal.addEventListener("abort", () => {
            ask.cancelled = true;
          });
          await gate;
          return { outcome: { outcome: "selected", optionId: "allow_once" } };
        });
      const stream = ndJsonStream(Writable.toWeb(c.child.stdin), Readable.toWeb(c.child.stdout) as ReadableStream<Uint8Array>);
      await editor.connectWith(stream, async (ctx) => {
        const sessionId = await openSession(ctx);
        const running = prompt(ctx, sessionId, "permission Edit main.ts");
        await waitFor(() => asks.length === 1, "the permission question");
        proxy.cut();
        await assert.rejects(running, /connection to the server was lost/);
        await waitFor(() => asks[0]?.cancelled === true, "the question to be cancelled");
        // The server asks again on the new connection, the session being still in its turn.
        await waitFor(() => asks.length === 2, "the question asked again");
        assert.equal(asks[1]?.cancelled, false);
        release();
        await waitFor(() => agentText(log, sessionId) === "outcome: selected allow_once", "the answer to count");
      });
      c.child.stdin.end();
      assert.equal(await c.exited, 0);
    });
  }

  test("a prompt larger than the server takes: the editor gets a JSON-RPC error naming HTTP 413, and the session goes on", async () => {
    const s = await server(false);
    const c = spawnConnect([s.url, "--token", TOKEN]);
    cleanups.push(() => c.kill());
    const log: EditorLog = { updates: [], permissions: [] };
    await asEditor(c, log, async (ctx) => {
      const sessionId = await openSession(ctx);
      const huge = `echo ${"x".repeat(5 * 1024 * 1024)}`;
      await assert.rejects(prompt(ctx, sessionId, huge), (error: Error & { data?: { status?: number } }) => {
        assert.equal(error.data?.status, 413);
        return true;
      });
      assert.equal((await prompt(ctx, sessionId, "echo still here")).stopReason, "end_turn");
      assert.equal(agentText(log, sessionId), "still here");
    });
    assert.equal(await c.exited, 0);
  });
});
