// A real agent's edit through the editor's host: `acp-remote serve --control
// stdio` as a child process, driven over the control protocol as the
// VS Code extension drives it, attached with `host.fs`; Qwen Code (which
// writes through the client's fs/*) behind it, its model the scripted
// endpoint. The file is written by the editor (here: the control client
// itself, as an editor's workspace edit would), never by the sidecar's own
// host; the remote client allows the edit.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { methods, type WriteTextFileRequest } from "@agentclientprotocol/sdk";
import { ControlHostRequest, ControlNotification, type PermissionAnswer, type ServerFailure, type ServerInfo } from "../../protocol/control.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { tapped, tappedCalls } from "../helpers/acp-tap.ts";
import { chunks, ScriptedModelApi } from "../helpers/scripted-model/server.ts";
import { isolatedHome } from "../interop/published-agents.ts";
import { connect, TOKEN, type Remote } from "./agent-serve.ts";
import { agentBin, newSession, prompt, TURN_TIMEOUT_MS } from "./agent-turns.ts";
import { QWEN_CODE } from "./real-agents.ts";

const NODE = new URL("../../node_modules/.bin/node", import.meta.url).pathname;
const CLI = new URL("../../sidecar/cli/main.ts", import.meta.url).pathname;
/** The sidecar's stop: shutdown, exit, then SIGKILL after this many milliseconds. */
const STOP_GRACE_MS = 20_000;

const available = agentBin(QWEN_CODE);
const skip = "skip" in available ? available.skip : false;
if (skip) process.stderr.write(`[agents] skipping ${QWEN_CODE.pkg}: ${skip}\n`);

describe(`${QWEN_CODE.pkg} behind a sidecar whose editor hosts fs/*`, { skip }, () => {
  let root = "";
  let api: ScriptedModelApi;
  let child: ChildProcessWithoutNullStreams | undefined;
  let editor: MessageConnection;
  let remote: Remote | undefined;
  let url = "";
  let stderr = "";
  const written: WriteTextFileRequest[] = [];
  const tapFile = (): string => join(root, "tap.jsonl");

  before(async () => {
    if ("skip" in available) return;
    api = await ScriptedModelApi.start();
    root = mkdtempSync(join(tmpdir(), "acp-agent-editor-"));
    const { home, env } = isolatedHome(root);
    const { command, args } = QWEN_CODE.command(available.bin);
    child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", join(root, "data"), "--stdio", "--clientProcessId=1"], {
      env: { ...process.env, ACP_REMOTE_TOKEN: TOKEN },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    editor = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    // The editor's host: the agent's writes arrive here and are made by the editor.
    editor.onRequest(methods.client.fs.writeTextFile, (params: WriteTextFileRequest) => {
      written.push(params);
      writeFileSync(params.path, params.content);
      return {};
    });
    editor.onRequest(methods.client.fs.readTextFile, (params: { path: string }) => ({ content: readFileSync(params.path, "utf8") }));
    // The remote client answers the permission; the editor's prompt is withdrawn then.
    editor.onRequest(ControlHostRequest.requestPermission, (_info, token) => new Promise<PermissionAnswer>((resolve) => token.onCancellationRequested(() => resolve({ outcome: { outcome: "cancelled" } }))));
    const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
      editor.onNotification(ControlNotification.serverStarted, resolve);
      editor.onNotification(ControlNotification.serverFailed, resolve);
    });
    editor.listen();
    await editor.sendRequest(Lsp.initialize, {
      processId: process.pid,
      initializationOptions: {
        host: { fs: true, terminal: true },
        permissionPolicy: "both",
        serve: { host: "127.0.0.1", port: 0, agents: [{ name: QWEN_CODE.name, ...tapped(tapFile(), command, args), env: { ...env, ...QWEN_CODE.env(api.url, home) } }] },
      },
    });
    await editor.sendNotification(Lsp.initialized, {});
    const info = await started;
    assert.ok("url" in info, `the listener did not start: ${JSON.stringify(info)}\n${stderr}`);
    url = info.url;
  }, { timeout: TURN_TIMEOUT_MS });

  after(async () => {
    await remote?.close();
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      await editor.sendRequest(Lsp.shutdown).catch(() => undefined);
      await editor.sendNotification(Lsp.exit).catch(() => undefined);
      const timer = setTimeout(() => child!.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    editor?.dispose();
    await api?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("the agent's fs/write_text_file reaches the editor, which writes the file; the turn ends end_turn", { timeout: TURN_TIMEOUT_MS }, async () => {
    remote = await connect(url, QWEN_CODE);
    const cwd = join(root, "project");
    mkdirSync(cwd);
    const file = join(cwd, "from-editor.txt");
    const trigger = "Write through the editor";
    api.script({ trigger, turns: [{ text: chunks("Writing from-editor.txt."), toolCall: QWEN_CODE.writeTool(file, "hosted by the editor\n") }, { text: chunks("Written.") }] });
    const sessionId = await newSession(QWEN_CODE, remote, cwd);
    const result = await prompt(remote, sessionId, `${trigger}, please.`);
    assert.equal(result.stopReason, "end_turn", stderr.slice(-2000));
    assert.ok(remote.permissions.some((p) => p.sessionId === sessionId), "the remote client was asked");
    assert.deepEqual(
      written.map((w) => ({ path: w.path, content: w.content, sessionId: w.sessionId })),
      [{ path: file, content: "hosted by the editor\n", sessionId }],
      "the editor wrote it, under the server's session id",
    );
    assert.equal(readFileSync(file, "utf8"), "hosted by the editor\n");
    assert.ok(tappedCalls(tapFile()).some((c) => c.from === "agent" && c.method === methods.client.fs.writeTextFile));
  });
});
