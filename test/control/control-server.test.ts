// The control protocol (docs/control-protocol.md) against the real sidecar:
// `node sidecar/cli/main.ts serve --control stdio` as a child process, driven by
// vscode-jsonrpc over its stdio with Content-Length framing, as an editor does.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ResponseError, createMessageConnection, type MessageConnection } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { methods } from "@agentclientprotocol/sdk";
import {
  ControlHostRequest,
  ControlNotification,
  ControlRequest,
  type ControlInitOptions,
  type PermissionInfo,
  type PermissionSettledEvent,
  type ServerFailure,
  type ServerInfo,
  type TurnEvent,
} from "../../protocol/control.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { agentText, connectRemote } from "../vscode/suite/remote-client.ts";

const NODE = new URL("../../node_modules/.bin/node", import.meta.url).pathname;
const CLI = new URL("../../sidecar/cli/main.ts", import.meta.url).pathname;
const AGENT = new URL("../fixtures/agent.ts", import.meta.url).pathname;
const TOKEN = "control-test-token-0123456789";

interface Sidecar {
  child: ChildProcessWithoutNullStreams;
  connection: MessageConnection;
  started: Promise<ServerInfo | ServerFailure>;
  exited: Promise<number | null>;
  stderr: () => string;
  stop(): Promise<void>;
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startSidecar(serve: ControlInitOptions["serve"] = {}, policy: ControlInitOptions["permissionPolicy"] = "both"): Promise<Sidecar> {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-control-"));
  dirs.push(dataDir);
  const child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", dataDir, "--stdio", "--clientProcessId=1"], {
    env: { ...process.env, ACP_REMOTE_TOKEN: TOKEN },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
    connection.onNotification(ControlNotification.serverStarted, resolve);
    connection.onNotification(ControlNotification.serverFailed, resolve);
  });
  connection.listen();
  let init;
  try {
    init = await connection.sendRequest(Lsp.initialize, {
      processId: process.pid,
      initializationOptions: {
        host: { fs: false, terminal: false },
        permissionPolicy: policy,
        serve: { host: "127.0.0.1", port: 0, agents: [{ name: "fixture", command: NODE, args: [AGENT] }], ...serve },
      },
    });
  } catch (error) {
    // A refused handshake leaves no sidecar behind.
    child.kill("SIGKILL");
    await exited;
    connection.dispose();
    throw error;
  }
  assert.deepEqual(init, { capabilities: {}, serverInfo: { name: "acp-remote", version: init.serverInfo.version } });
  await connection.sendNotification(Lsp.initialized, {});
  return {
    child,
    connection,
    started,
    exited,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await connection.sendRequest(Lsp.shutdown).catch(() => undefined);
        await connection.sendNotification(Lsp.exit).catch(() => undefined);
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        await exited;
        clearTimeout(timer);
      }
      connection.dispose();
    },
  };
}

async function running(s: Sidecar): Promise<ServerInfo> {
  const info = await s.started;
  assert.ok("url" in info, `the listener did not start: ${JSON.stringify(info)}\n${s.stderr()}`);
  return info;
}

async function status(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

/** POST /acp initialize as a page behind a proxy sends it: with the Host and Origin given (fetch cannot set Host). */
function initializeThrough(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 0, method: methods.agent.initialize, params: { protocolVersion: 1, clientCapabilities: {} } });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/acp`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers } }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("error", reject);
    req.end(body);
  });
}

describe("control protocol over stdio", () => {
  it("initialize | answers capabilities {} and serverInfo, then serverStarted with the URL", async () => {
    const s = await startSidecar();
    try {
      const info = await running(s);
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.pid, s.child.pid);
      assert.equal(info.tls, false);
    } finally {
      await s.stop();
    }
  });

  it("initializationOptions.serve.tls | HTTPS with a self-signed certificate: serverStarted says https and tls", async () => {
    const s = await startSidecar({ tls: true });
    try {
      const info = await running(s);
      assert.match(info.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.tls, true);
    } finally {
      await s.stop();
    }
  });

  it("acpRemote/status | the snapshot lists the agent from initializationOptions.serve.agents", async () => {
    const s = await startSidecar();
    try {
      const info = await running(s);
      const snapshot = await s.connection.sendRequest(ControlRequest.status);
      assert.equal(snapshot.server?.url, info.url);
      assert.deepEqual(snapshot.agents.map((a) => a.name), ["fixture"]);
    } finally {
      await s.stop();
    }
  });

  it("ACP_REMOTE_TOKEN | accepted; acpRemote/auth/setTokens: the new token works and the old one gets 401", async () => {
    const s = await startSidecar();
    try {
      const { url } = await running(s);
      assert.equal(await status(url, TOKEN), 200);
      assert.equal(await s.connection.sendRequest(ControlRequest.setTokens, { tokens: ["rotated-token-abcdefghijklmnop"] }), null);
      assert.equal(await status(url, "rotated-token-abcdefghijklmnop"), 200);
      assert.equal(await status(url, TOKEN), 401);
    } finally {
      await s.stop();
    }
  });

  for (const [name, send, expected] of [
    ["acpRemote/auth/setTokens | an empty list is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.setTokens, { tokens: [] })],
    ["acpRemote/auth/setTokens | a token that is not a string is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.setTokens, { tokens: ["a-token-of-enough-length", 7 as unknown as string] })],
    ["acpRemote/upstream/setKey | an empty key is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.setUpstreamKey, { key: "" })],
    ["acpRemote/permission/setPolicy | a value outside editor/client/both is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.setPermissionPolicy, { policy: "nobody" as "both" })],
    ["acpRemote/session/transcript | no sessionId is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.transcript, {} as { sessionId: string })],
    ["acpRemote/session/transcript | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.transcript, { sessionId: "no-such-session" }), -32001],
    ["acpRemote/session/cancel | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.cancelTurn, { sessionId: "no-such-session" }), -32001],
    ["acpRemote/session/close | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.closeSession, { sessionId: "no-such-session" }), -32001],
    ["acpRemote/session/new | no cwd is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.newSession, {} as { cwd: string })],
    ["acpRemote/session/new | an agent that is not configured is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.newSession, { agent: "nope", cwd: tmpdir() })],
    ["acpRemote/session/prompt | an empty prompt is -32602", (c: MessageConnection) => c.sendRequest(ControlRequest.prompt, { sessionId: "s", prompt: [] })],
    ["acpRemote/session/prompt | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.prompt, { sessionId: "no-such-session", prompt: [{ type: "text", text: "x" }] }), -32001],
    ["acpRemote/session/setMode | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.setMode, { sessionId: "no-such-session", modeId: "ask" }), -32001],
    ["acpRemote/session/open | an unknown session is -32001", (c: MessageConnection) => c.sendRequest(ControlRequest.openSession, { sessionId: "no-such-session" }), -32001],
  ] as const) {
    it(name, async () => {
      const s = await startSidecar();
      try {
        await running(s);
        await assert.rejects(send(s.connection), (err: unknown) => err instanceof ResponseError && err.code === (expected ?? -32602));
      } finally {
        await s.stop();
      }
    });
  }

  for (const [name, serve, policy, message] of [
    ["initialize | a port that is not an integer is -32602, naming the field", { port: "8765" as unknown as number }, "both", /serve\.port/],
    ["initialize | an agent without a command is -32602, naming the field", { agents: [{ name: "x", args: [] } as unknown as AgentSpec] }, "both", /serve\.agents\.0\.command/],
    ["initialize | a permissionPolicy outside editor/client/both is -32602", {}, "nobody" as "both", /permissionPolicy must be one of editor, client, both/],
  ] as const) {
    it(name, async () => {
      await assert.rejects(startSidecar(serve as ControlInitOptions["serve"], policy), (err: unknown) => {
        assert.ok(err instanceof ResponseError, String(err));
        assert.equal(err.code, -32602);
        assert.match(err.message, message);
        return true;
      });
    });
  }

  it("acpRemote/server/addPublicUrl | regression: the address asExternalUri gives was refused 403 (its Host and Origin); once told, the sidecar accepts it at once", async () => {
    const s = await startSidecar();
    try {
      const info = await running(s);
      assert.deepEqual(info.publicUrls, [], "no --public-url given");
      const forwarded = { host: "box-8765.example.dev", origin: "https://box-8765.example.dev" };
      assert.equal(await initializeThrough(info.url, forwarded), 403);
      const answer = await s.connection.sendRequest(ControlRequest.addPublicUrl, { url: "https://box-8765.example.dev/" });
      assert.deepEqual(answer, { publicUrls: ["https://box-8765.example.dev"] });
      assert.equal(await initializeThrough(info.url, forwarded), 200);
      // Told again (each time the panel draws the link): still one.
      assert.deepEqual(await s.connection.sendRequest(ControlRequest.addPublicUrl, { url: "https://box-8765.example.dev" }), answer);
      // Only that address: another is still refused.
      assert.equal(await initializeThrough(info.url, { host: "rebound.example", origin: "https://rebound.example" }), 403);
      await assert.rejects(s.connection.sendRequest(ControlRequest.addPublicUrl, { url: "box.example" }), (e: ResponseError<unknown>) => e.code === -32602 && /not a URL/.test(e.message));
      await assert.rejects(s.connection.sendRequest(ControlRequest.addPublicUrl, { url: "https://box.example/acp" }), (e: ResponseError<unknown>) => e.code === -32602 && /answers itself/.test(e.message));
    } finally {
      await s.stop();
    }
  });

  it("acpRemote/session/new, prompt, list | the editor starts and prompts a session; turn and update notifications follow", async () => {
    const s = await startSidecar();
    try {
      await running(s);
      const turns: TurnEvent[] = [];
      const texts: string[] = [];
      s.connection.onNotification(ControlNotification.turn, (e) => void turns.push(e));
      s.connection.onNotification(ControlNotification.sessionUpdate, (n) => {
        if (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text") texts.push(n.update.content.text);
      });
      const opened = await s.connection.sendRequest(ControlRequest.newSession, { cwd: tmpdir() });
      assert.equal(opened.agent, "fixture");
      assert.deepEqual(opened.updates, []);
      assert.equal(opened.modes?.currentModeId, "ask");
      const result = await s.connection.sendRequest(ControlRequest.prompt, { sessionId: opened.sessionId, prompt: [{ type: "text", text: "echo hello from the editor" }] });
      assert.deepEqual(result, { stopReason: "end_turn" });
      assert.deepEqual(texts, ["hello from the editor"]);
      assert.deepEqual(turns, [
        { sessionId: opened.sessionId, state: "started" },
        { sessionId: opened.sessionId, state: "ended", stopReason: "end_turn" },
      ]);
      const list = await s.connection.sendRequest(ControlRequest.listSessions);
      assert.deepEqual(list.sessions.map((x) => [x.sessionId, x.owner]), [[opened.sessionId, "owner"]]);
      assert.deepEqual(list.agents.map((a) => a.name), ["fixture"]);
      assert.equal(list.sessions[0]?.title, "echo hello from the editor", "named after its first prompt");
      const reopened = await s.connection.sendRequest(ControlRequest.openSession, { sessionId: opened.sessionId });
      assert.equal(reopened.title, "echo hello from the editor");
      // The prompt, the title it gave the session, the agent's answer, and the mark of the turn's end (protocol/history.ts).
      assert.deepEqual(
        reopened.updates.map((n) => [n.update.sessionUpdate, n.update.sessionUpdate === "session_info_update" ? (n.update.title ?? "mark") : ""]),
        [["user_message_chunk", ""], ["session_info_update", "echo hello from the editor"], ["agent_message_chunk", ""], ["session_info_update", "mark"]],
      );
    } finally {
      await s.stop();
    }
  });

  it("acpRemote/permission/request | reaches the editor; the editor's answer finishes the remote turn", async () => {
    const s = await startSidecar();
    const asked: PermissionInfo[] = [];
    s.connection.onRequest(ControlHostRequest.requestPermission, (info) => {
      asked.push(info);
      return { outcome: { outcome: "selected", optionId: "allow_always" } };
    });
    const remote = connectRemote((await running(s)).url, TOKEN);
    try {
      const text = await remote.run(async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
        const result = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Deploy" }] });
        assert.equal(result.stopReason, "end_turn");
        return agentText(remote.updates, sessionId);
      });
      assert.match(text, /outcome: selected allow_always/);
      assert.equal(asked[0]?.toolCall.title, "Deploy");
    } finally {
      remote.close();
      await s.stop();
    }
  });

  it("acpRemote/permission/request | the remote client answers first: the editor's request is cancelled ($/cancelRequest)", async () => {
    const s = await startSidecar();
    let cancelled!: () => void;
    const wasCancelled = new Promise<void>((r) => (cancelled = r));
    s.connection.onRequest(ControlHostRequest.requestPermission, (_info, token) => {
      return new Promise((resolve) => {
        token.onCancellationRequested(() => {
          cancelled();
          resolve({ outcome: { outcome: "cancelled" } });
        });
      });
    });
    const remote = connectRemote((await running(s)).url, TOKEN);
    try {
      const text = await remote.run(async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Delete" }] });
        for (let i = 0; i < 600 && remote.asks.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
        remote.asks[0]!.answer({ outcome: { outcome: "selected", optionId: "reject_once" } });
        assert.equal((await turn).stopReason, "end_turn");
        return agentText(remote.updates, sessionId);
      });
      assert.match(text, /outcome: selected reject_once/);
      await wasCancelled;
    } finally {
      remote.close();
      await s.stop();
    }
  });

  it("regression: a permission the phone answered showed as 'Withdrawn' in the editor | acpRemote/permission/settled names the device and its answer, as the editor's request is cancelled", async () => {
    const s = await startSidecar();
    let phone: ReturnType<typeof connectRemote> | undefined;
    try {
      const seen: string[] = [];
      const settled: PermissionSettledEvent[] = [];
      let told!: () => void;
      const bothTold = new Promise<void>((r) => (told = r));
      const note = (what: string): void => {
        seen.push(what);
        if (seen.length === 2) told();
      };
      s.connection.onNotification(ControlNotification.permissionSettled, (event) => {
        settled.push(event);
        note("settled");
      });
      s.connection.onRequest(ControlHostRequest.requestPermission, (_info, token) => {
        return new Promise((resolve) => {
          token.onCancellationRequested(() => {
            note("cancelled");
            resolve({ outcome: { outcome: "cancelled" } });
          });
        });
      });
      const url = (await running(s)).url;
      const paired = await s.connection.sendRequest(ControlRequest.pairDevice, { label: "Pixel 8" });
      const device = connectRemote(url, paired.token);
      phone = device;
      await device.run(async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Deploy" }] });
        for (let i = 0; i < 600 && device.asks.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
        device.asks[0]!.answer({ outcome: { outcome: "selected", optionId: "allow_once" } });
        assert.equal((await turn).stopReason, "end_turn");
        // Sent before the $/cancelRequest; vscode-jsonrpc cancels a running request the moment it reads
        // the cancellation, ahead of the notifications it queued, so the editor takes them in either order.
        await bothTold;
        assert.deepEqual([...seen].sort(), ["cancelled", "settled"]);
        assert.deepEqual({ ...settled[0], permissionId: undefined }, { permissionId: undefined, sessionId, outcome: { outcome: "selected", optionId: "allow_once" }, settledBy: "client", device: "Pixel 8" });
      });
    } finally {
      phone?.close();
      await s.stop();
    }
  });

  it("initializationOptions.serve.upstreamUrl + acpRemote/upstream/setKey | /v1 lists the provider's models, which sees the editor's key", async () => {
    // A small OpenAI-compatible provider that lists one model to the right key only.
    const seen: string[] = [];
    const upstream = createHttpServer((req, res) => {
      seen.push(req.headers.authorization ?? "");
      if (req.headers.authorization !== "Bearer upstream-secret") {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "bad key", type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [{ id: "up-model", object: "model", created: 0, owned_by: "upstream" }] }));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`;
    const s = await startSidecar({ upstreamUrl });
    try {
      const { url } = await running(s);
      assert.equal(await s.connection.sendRequest(ControlRequest.setUpstreamKey, { key: "upstream-secret" }), null);
      const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const models = ((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
      assert.ok(models.includes("up-model"), JSON.stringify(models));
      assert.ok(models.includes("fixture"));
      assert.ok(seen.includes("Bearer upstream-secret"));
    } finally {
      await s.stop();
      upstream.close();
    }
  });

  it("acpRemote/upstream/setKey | without an upstream provider: a clear error", async () => {
    const s = await startSidecar();
    try {
      await running(s);
      await assert.rejects(s.connection.sendRequest(ControlRequest.setUpstreamKey, { key: "k" }), /no upstream provider/);
    } finally {
      await s.stop();
    }
  });

  it("serverFailed | a port already in use: EADDRINUSE with the fix, and the sidecar stays up until shutdown/exit", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    const s = await startSidecar({ port });
    try {
      const failure = await s.started;
      assert.ok(!("url" in failure));
      assert.equal(failure.code, "EADDRINUSE");
      assert.equal(failure.message, `port ${port} on 127.0.0.1 is already in use`);
      assert.match(failure.fix ?? "", /another port/);
      assert.equal(s.child.exitCode, null);
      await assert.rejects(s.connection.sendRequest(ControlRequest.status), (err: unknown) => err instanceof ResponseError && err.code === -32002);
    } finally {
      blocker.close();
      await s.stop();
    }
    assert.equal(await s.exited, 0);
  });

  it("shutdown then exit | the process exits with 0", async () => {
    const s = await startSidecar();
    await running(s);
    await s.stop();
    assert.equal(await s.exited, 0);
  });

  it("the control channel closes (the editor is gone) | the sidecar stops and exits", async () => {
    const s = await startSidecar();
    const { url } = await running(s);
    s.connection.dispose();
    s.child.stdin.end();
    const timer = setTimeout(() => s.child.kill("SIGKILL"), 30_000);
    const code = await s.exited;
    clearTimeout(timer);
    assert.equal(code, 1, "exit without shutdown is 1 (LSP)");
    await assert.rejects(fetch(`${url}/v1/models`));
  });
});
