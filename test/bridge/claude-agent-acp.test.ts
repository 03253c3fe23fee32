// Interop with a published agent: @agentclientprotocol/claude-agent-acp (a
// devDependency) started through AgentProcess. `initialize` and `session/new`
// need no API key and no network; a prompt would, so none is sent.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NewSessionResponse, SessionNotification } from "@agentclientprotocol/sdk";
import { AgentProcess, RpcFailure, type AgentPeerHandler } from "../../sidecar/bridge/agent-process.ts";
import { Acp } from "../../protocol/acp.ts";

const PACKAGE_JSON = fileURLToPath(new URL("../../node_modules/@agentclientprotocol/claude-agent-acp/package.json", import.meta.url));

/** The agent's bin, run with this Node (its shebang would pick whatever `node` is on PATH). */
function agentEntry(): string | undefined {
  if (!existsSync(PACKAGE_JSON)) return undefined;
  const bin = (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { bin: Record<string, string> }).bin["claude-agent-acp"];
  return bin === undefined ? undefined : join(dirname(PACKAGE_JSON), bin);
}

const entry = agentEntry();
const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const step of cleanup) await step();
});

test(
  "claude-agent-acp: initialize and session/new pass through AgentProcess",
  { skip: entry === undefined ? "@agentclientprotocol/claude-agent-acp is not installed (npm install)" : false, timeout: 120_000 },
  async () => {
    // A fresh HOME: no login, no settings of the machine's user, nothing left behind.
    const home = await mkdtemp(join(tmpdir(), "acp-claude-home-"));
    const cwd = await mkdtemp(join(tmpdir(), "acp-claude-cwd-"));
    cleanup.push(() => rm(home, { recursive: true, force: true }), () => rm(cwd, { recursive: true, force: true }));

    const updates: SessionNotification[] = [];
    let onUpdate: () => void = () => {};
    const handler: AgentPeerHandler = {
      request: async (method) => {
        throw RpcFailure.methodNotFound(method);
      },
      notification: (method, params) => {
        if (method === Acp.client.session.update) updates.push(params as SessionNotification);
        onUpdate();
      },
    };
    const logs: string[] = [];
    const agent = new AgentProcess(
      {
        name: "claude",
        command: process.execPath,
        args: [entry!],
        env: {
          HOME: home,
          // The agent turns on permission bypass when IS_SANDBOX is set at all,
          // while the Claude Code CLI it starts accepts that as root only for
          // IS_SANDBOX=1 and exits otherwise; an empty value keeps both off.
          IS_SANDBOX: "",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
        },
      },
      handler,
      { log: (line) => logs.push(line), maxRestarts: 0 },
    );
    cleanup.unshift(() => agent.stop());

    await agent.start().catch((error: unknown) => assert.fail(`${String(error)}\n${logs.join("\n")}`));
    const init = agent.initializeResult!;
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo?.name, "@agentclientprotocol/claude-agent-acp");
    assert.equal(init.agentCapabilities?.loadSession, true);

    const created = (await agent.request(Acp.agent.session.new, { cwd, mcpServers: [] })) as NewSessionResponse;
    assert.equal(typeof created.sessionId, "string");
    assert.ok(created.sessionId.length > 0);
    // The agent announces its slash commands for the new session through session/update.
    await new Promise<void>((resolve) => {
      onUpdate = () => {
        if (updates.some((u) => u.sessionId === created.sessionId && u.update.sessionUpdate === "available_commands_update")) resolve();
      };
      onUpdate();
    });
    await agent.stop();
    assert.equal(agent.state, "stopped");
  },
);
