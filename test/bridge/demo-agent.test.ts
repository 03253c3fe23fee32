// The embedded demo agent in a real child process, driven by the ACP SDK's own
// client over ndJsonStream: the client answers the permission request and
// serves the file read, as an editor would.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type ClientContext,
  type InitializeResponse,
  type PromptResponse,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";

const DEMO_MODULE = fileURLToPath(new URL("../../sidecar/agents/demo/demo-agent.ts", import.meta.url));

const children = new Set<ChildProcessWithoutNullStreams>();
const folders: string[] = [];
after(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

function spawnDemo(env: Record<string, string> = { ACP_REMOTE_DEMO_DELAY_MS: "1" }): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ["--input-type=module", "-e", `const m = await import(${JSON.stringify(DEMO_MODULE)}); await m.runDemoAgent();`], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  child.stderr.on("data", (chunk: Buffer) => process.stderr.write(`[demo] ${chunk.toString("utf8")}`));
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

interface Recorded {
  updates: SessionUpdate[];
  permissions: RequestPermissionRequest[];
  reads: ReadTextFileRequest[];
}

interface ClientBehaviour {
  /** The option the person picks; "cancel-turn" sends session/cancel instead of answering. */
  permission: (request: RequestPermissionRequest, ctx: ClientContext, signal: AbortSignal) => Promise<RequestPermissionResponse>;
  /** Files the client serves, by absolute path. */
  files: Record<string, string>;
}

/** Runs the demo agent with an SDK client; `op` drives the session. */
async function withDemo<T>(behaviour: ClientBehaviour, op: (ctx: ClientContext, recorded: Recorded, init: InitializeResponse) => Promise<T>, env?: Record<string, string>): Promise<T> {
  const child = spawnDemo(env);
  const recorded: Recorded = { updates: [], permissions: [], reads: [] };
  const app = client({ name: "demo-agent-test" })
    .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      recorded.updates.push(params.update);
    })
    .onRequest(methods.client.session.requestPermission, ({ params, agent, signal }) => {
      recorded.permissions.push(params);
      return behaviour.permission(params, agent, signal);
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      recorded.reads.push(params);
      const content = behaviour.files[params.path];
      if (content === undefined) throw RequestError.resourceNotFound(params.path);
      const lines = content.split("\n");
      const start = (params.line ?? 1) - 1;
      return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join("\n") };
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  try {
    return await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
        clientInfo: { name: "demo-agent-test", version: "1.0.0" },
      });
      return op(ctx, recorded, init);
    });
  } finally {
    child.stdin.end();
    child.kill();
  }
}

const choose = (optionId: string) => async (): Promise<RequestPermissionResponse> => ({ outcome: { outcome: "selected", optionId } });

function text(updates: SessionUpdate[], kind: "agent_message_chunk" | "agent_thought_chunk"): { chunks: number; text: string } {
  const parts: string[] = [];
  for (const u of updates) {
    if ((u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") && u.sessionUpdate === kind) {
      parts.push(u.content.type === "text" ? u.content.text : "");
    }
  }
  return { chunks: parts.length, text: parts.join("") };
}

async function newSession(ctx: ClientContext, cwd: string): Promise<string> {
  const created = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  return created.sessionId;
}

function prompt(ctx: ClientContext, sessionId: string, words: string): Promise<PromptResponse> {
  return ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: words }] });
}

async function folder(readme?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "acp-demo-"));
  folders.push(dir);
  if (readme !== undefined) await writeFile(join(dir, "README.md"), readme);
  return dir;
}

describe("the demo agent", () => {
  test("a full turn: thoughts, message, plan, an edit asking permission (allowed once), a README read through the client, end_turn", async () => {
    const cwd = await folder();
    const readme = "\n# My project\n\nIt does things.\n";
    await withDemo({ permission: choose("allow_once"), files: { [join(cwd, "README.md")]: readme } }, async (ctx, recorded, init) => {
      assert.equal(init.agentInfo?.name, "acp-remote-demo");
      assert.equal(init.agentCapabilities?.loadSession, true);
      const sessionId = await newSession(ctx, cwd);
      const response = await prompt(ctx, sessionId, "Show me what you can do");
      assert.equal(response.stopReason, "end_turn");

      const thoughts = text(recorded.updates, "agent_thought_chunk");
      assert.ok(thoughts.chunks > 5, "thoughts stream word by word");
      assert.match(thoughts.text, /Show me what you can do/);
      const message = text(recorded.updates, "agent_message_chunk");
      assert.ok(message.chunks > 20, "the message streams word by word");
      assert.match(message.text, /demo agent of acp-remote/);
      assert.match(message.text, /--agent NAME=COMMAND/);
      assert.match(message.text, /allow once/);
      assert.match(message.text, /first line is: "# My project"/);

      const plans = recorded.updates.filter((u) => u.sessionUpdate === "plan");
      assert.ok(plans.length >= 2);
      const last = plans.at(-1)!;
      assert.ok("entries" in last && last.entries.length === 4 && last.entries.every((e) => e.status === "completed"));

      const edit = recorded.updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "edit");
      assert.ok(edit && edit.sessionUpdate === "tool_call");
      assert.equal(edit.content?.[0]?.type, "diff");
      assert.equal(recorded.permissions.length, 1);
      assert.equal(recorded.permissions[0]!.toolCall.toolCallId, edit.toolCallId);
      assert.deepEqual(recorded.permissions[0]!.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
      const editDone = recorded.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === edit.toolCallId && u.status === "completed");
      assert.ok(editDone);

      assert.deepEqual(recorded.reads, [{ sessionId, path: join(cwd, "README.md"), line: 1, limit: 5 }]);
      const read = recorded.updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "read");
      assert.ok(read && read.sessionUpdate === "tool_call");
      const readDone = recorded.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === read.toolCallId);
      assert.ok(readDone && readDone.sessionUpdate === "tool_call_update" && readDone.status === "completed");
      assert.deepEqual(readDone.content, [{ type: "content", content: { type: "text", text: readme.split("\n").slice(0, 5).join("\n") } }]);
    }, {});
  });

  test("permission rejected: the edit fails, nothing is changed, the turn still ends with end_turn", async () => {
    const cwd = await folder();
    await withDemo({ permission: choose("reject_once"), files: {} }, async (ctx, recorded) => {
      const sessionId = await newSession(ctx, cwd);
      assert.equal((await prompt(ctx, sessionId, "hi")).stopReason, "end_turn");
      const failed = recorded.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
      assert.ok(failed);
      assert.match(text(recorded.updates, "agent_message_chunk").text, /You rejected the edit/);
    });
  });

  test("no README in the cwd: the agent says it found none", async () => {
    const cwd = await folder();
    await withDemo({ permission: choose("allow_once"), files: {} }, async (ctx, recorded) => {
      const sessionId = await newSession(ctx, cwd);
      assert.equal((await prompt(ctx, sessionId, "hi")).stopReason, "end_turn");
      assert.match(text(recorded.updates, "agent_message_chunk").text, /found none/);
    });
  });

  test("allow always: the next turn of the session does not ask again", async () => {
    const cwd = await folder();
    await withDemo({ permission: choose("allow_always"), files: {} }, async (ctx, recorded) => {
      const sessionId = await newSession(ctx, cwd);
      await prompt(ctx, sessionId, "first");
      await prompt(ctx, sessionId, "second");
      assert.equal(recorded.permissions.length, 1);
      assert.match(text(recorded.updates, "agent_message_chunk").text, /do not ask again/);
    });
  });

  test("session/cancel while the permission request waits: the request is withdrawn and the turn ends cancelled", async () => {
    const cwd = await folder();
    let withdrawn = false;
    await withDemo(
      {
        files: {},
        permission: (request, ctx, signal) =>
          new Promise((resolve) => {
            signal.addEventListener("abort", () => {
              withdrawn = true;
              resolve({ outcome: { outcome: "cancelled" } });
            });
            void ctx.notify(methods.agent.session.cancel, { sessionId: request.sessionId });
          }),
      },
      async (ctx, recorded) => {
        const sessionId = await newSession(ctx, cwd);
        assert.equal((await prompt(ctx, sessionId, "hi")).stopReason, "cancelled");
        assert.equal(withdrawn, true, "the agent sent $/cancel_request for its permission request");
        assert.equal(recorded.reads.length, 0, "nothing runs after the cancel");
      },
    );
  });

  test("session/load is acknowledged and the loaded session can be prompted; session/close ends it", async () => {
    const cwd = await folder();
    await withDemo({ permission: choose("allow_once"), files: {} }, async (ctx) => {
      await ctx.request(methods.agent.session.load, { sessionId: "demo-from-an-earlier-run", cwd, mcpServers: [] });
      assert.equal((await prompt(ctx, "demo-from-an-earlier-run", "/help")).stopReason, "end_turn");
      await ctx.request(methods.agent.session.close, { sessionId: "demo-from-an-earlier-run" });
      await assert.rejects(prompt(ctx, "demo-from-an-earlier-run", "hi"), (error: unknown) => error instanceof RequestError && error.code === -32002);
    });
  });
});
