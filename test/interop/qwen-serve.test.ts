// `acp-remote connect` against a second server of the ACP remote transport:
// `qwen serve` (Qwen Code 0.24+: HTTP/1.1 and WebSocket on /acp, a bearer
// token). The editor is the SDK's client on connect's stdio; a TCP proxy
// between connect and qwen serve is cut to make connect reconnect. Qwen Code
// comes from the interop test cache (published-agents.ts); its model API is
// the local endpoint that refuses every call.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { asEditor, spawnConnect, type EditorLog } from "../helpers/connect-child.ts";
import { ensureCachedPackages, type CachedPackages } from "../helpers/npm-cache-install.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { isolatedHome, pinnedPackages, PUBLISHED_AGENTS } from "./published-agents.ts";
import { startRefusingModelApi, type RefusingModelApi } from "./refusing-model-api.ts";

const TOKEN = "qwen-serve-interop-token-0123456789";
const QWEN = PUBLISHED_AGENTS.find((a) => a.registryId === "qwen-code")!;
/** qwen serve starts its daemon and preheats a `qwen --acp` child: in milliseconds. */
const START_TIMEOUT_MS = 60_000;
const CASE_TIMEOUT_MS = 120_000;

let cache: CachedPackages;
let api: RefusingModelApi;
let qwen: { child: ChildProcess; port: number; workspace: string; output: () => string } | undefined;
let root = "";
const cleanups: Array<() => Promise<void> | void> = [];

before(async () => {
  cache = ensureCachedPackages("interop-agents", pinnedPackages(), (line) => process.stderr.write(`[interop] ${line}\n`));
  if (cache.missing.has(QWEN.pkg)) return;
  api = await startRefusingModelApi();
  root = mkdtempSync(join(tmpdir(), "acp-qwen-serve-"));
  const { home, env } = isolatedHome(root);
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const child = spawn(join(cache.bin, QWEN.bin), ["serve", "--port", "0", "--no-web", "--chat-recording", "--workspace", workspace], {
    cwd: workspace,
    env: { ...process.env, ...env, ...QWEN.env(api.url, home), QWEN_SERVER_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let port: number | undefined;
  while (port === undefined) {
    const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
    if (match && /\/acp WebSocket transport enabled/.test(output)) port = Number(match[1]);
    else {
      assert.ok(child.exitCode === null && Date.now() < deadline, `qwen serve did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  qwen = { child, port, workspace, output: () => output };
}, { timeout: 20 * 60_000 });

after(async () => {
  for (const c of cleanups.reverse()) await c();
  if (qwen?.child.pid !== undefined && qwen.child.exitCode === null) {
    const exited = new Promise((resolve) => qwen!.child.once("exit", resolve));
    process.kill(-qwen.child.pid, "SIGTERM");
    await exited;
  }
  await api?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe(`acp-remote connect ↔ qwen serve (${QWEN.pkg}@${QWEN.version})`, () => {
  const departures = {
    // qwen serve opens a session's stream only to the connection that loaded the session, and says 403.
    http: "regression: --transport http: initialize, session/new, a cut, and the session goes on (a 403 on its stream before the load was taken for refused credentials and connect gave up)",
    // qwen serve ends the lost connection's session, and refuses a load while it does.
    ws: "regression: --transport ws: initialize, session/new, a cut, and the session goes on (a load answered 'retry after close completes' dropped the session)",
  } as const;
  for (const transport of ["http", "ws"] as const) {
    test(departures[transport], { timeout: CASE_TIMEOUT_MS }, async (t) => {
      if (!qwen) return t.skip(`${QWEN.pkg} cannot be installed on this machine: ${cache.missing.get(QWEN.pkg)}`);
      const proxy = await startTcpProxy(qwen.port);
      cleanups.push(() => proxy.close());
      // qwen serve accepts only its own address in Host (DNS rebinding); the proxy keeps it.
      const c = spawnConnect([`http://127.0.0.1:${proxy.port}/acp`, "--transport", transport, "--header", `Host: 127.0.0.1:${qwen.port}`], { ACP_REMOTE_TOKEN: TOKEN });
      cleanups.push(() => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      t.after(() => process.stderr.write(`[connect ${transport}]\n${c.stderr()}\n`));
      await asEditor(c, log, async (ctx) => {
        const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        assert.equal(init.protocolVersion, PROTOCOL_VERSION);
        assert.equal(init.agentCapabilities?.loadSession, true);
        const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: qwen!.workspace, mcpServers: [] });
        assert.equal(typeof sessionId, "string");
        await c.waitForLog(transport === "ws" ? "over websocket" : "over http/1.1");
        // A prompt reaches the agent, whose model API refuses it (qwen serve keeps the details to itself).
        const prompt = () => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Say hello" }] }).then(() => undefined, (e: unknown) => e);
        const calls = api.requests.length;
        assert.ok((await prompt()) !== undefined, "the prompt fails");
        assert.ok(api.requests.length > calls, "the prompt reached the model API");
        proxy.cut();
        await c.waitForLog("reconnected", 60_000);
        assert.doesNotMatch(c.stderr(), /could not be loaded again/);
        // The session was loaded again on the new connection: a prompt on it reaches the agent again.
        const before = api.requests.length;
        const error = await prompt();
        assert.ok(api.requests.length > before, `the prompt after the reconnect reached the agent: ${JSON.stringify(error)}\n${c.stderr()}`);
      });
      assert.equal(await c.exited, 0, c.stderr());
    });
  }
});
