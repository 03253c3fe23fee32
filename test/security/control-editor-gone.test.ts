// The control protocol's notifications are sent from the hub's events and a
// debounce timer. When the editor's end of the pipe is gone mid-turn, a write
// fails: that failure is logged and the sidecar stops in order (its agents
// stopped, its journal written), rather than dying of an unhandled rejection.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { StreamMessageReader, type Message } from "vscode-jsonrpc/node";
import { ControlNotification, ControlRequest } from "../../protocol/control.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

const DEADLINE_MS = 30_000;

test("the editor's end of stdout closing while session updates stream: the failed notification is logged and the sidecar stops in order, not by an unhandled rejection", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-editor-gone-"));
  const child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", dataDir], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const send = (message: unknown): void => {
    const json = JSON.stringify(message);
    child.stdin.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
  };
  const received: Record<string, unknown>[] = [];
  let arrived: () => void = () => undefined;
  new StreamMessageReader(child.stdout).listen((m: Message) => {
    received.push(m as unknown as Record<string, unknown>);
    arrived();
  });
  const next = async (accept: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      const at = received.findIndex(accept);
      if (at !== -1) return received.splice(at, 1)[0] as Record<string, unknown>;
      assert.ok(Date.now() < deadline, `no such message within ${DEADLINE_MS} ms; stderr:\n${stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        arrived = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };

  send({
    jsonrpc: "2.0",
    id: 1,
    method: Lsp.initialize.method,
    params: {
      processId: process.pid,
      initializationOptions: { host: { fs: false, terminal: false }, permissionPolicy: "both", serve: { host: "127.0.0.1", port: 0, agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }] } },
    },
  });
  await next((m) => m["id"] === 1);
  await next((m) => m["method"] === ControlNotification.serverStarted.method);
  send({ jsonrpc: "2.0", id: 2, method: ControlRequest.newSession.method, params: { cwd: tmpdir() } });
  const { result } = (await next((m) => m["id"] === 2)) as { result: { sessionId: string } };
  send({ jsonrpc: "2.0", id: 3, method: ControlRequest.prompt.method, params: { sessionId: result.sessionId, prompt: [{ type: "text", text: "flood 20000 200" }] } });
  await next((m) => m["method"] === ControlNotification.sessionUpdate.method);

  // The editor's end of the pipe goes away while the updates stream.
  child.stdout.destroy();
  const killer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
  const code = await exited;
  clearTimeout(killer);
  assert.equal(child.signalCode, null, `killed after ${DEADLINE_MS} ms; stderr:\n${stderr}`);
  // LSP: an exit without shutdown is 1; what matters is how it got there.
  assert.equal(code, 1);
  assert.match(stderr, /acp-remote: control: acpRemote\/\S+ not sent \(nor any after it until one goes through\): write EPIPE/);
  assert.equal(stderr.match(/ not sent /g)?.length, 1, "logged once, not once per update");
  assert.match(stderr, /agent fixture was killed by SIGTERM \(stopped\)/, "the agent was stopped by the sidecar's own shutdown");
  assert.doesNotMatch(stderr, /errno: -32|Unhandled|at WritableStreamWrapper/);
});
