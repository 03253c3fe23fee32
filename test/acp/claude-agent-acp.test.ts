// Interop through the whole sidecar with a published agent:
// @agentclientprotocol/claude-agent-acp as `--agent`, the SDK's own client over
// Streamable HTTP. `initialize` and `session/new` need no API key and no
// network (a prompt would, so none is sent); what the agent says must reach the
// remote client as it said it, under the sidecar's session id.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { client, methods, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { serve } from "../../sidecar/server/serve.ts";

const PACKAGE_JSON = fileURLToPath(new URL("../../node_modules/@agentclientprotocol/claude-agent-acp/package.json", import.meta.url));
const TOKEN = "claude-interop-token-0123456789";

function agentEntry(): string | undefined {
  if (!existsSync(PACKAGE_JSON)) return undefined;
  const bin = (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { bin: Record<string, string> }).bin["claude-agent-acp"];
  return bin === undefined ? undefined : join(dirname(PACKAGE_JSON), bin);
}
const entry = agentEntry();

test(
  "claude-agent-acp behind acp-remote serve: the SDK client's initialize and session/new pass through",
  { skip: entry === undefined ? "@agentclientprotocol/claude-agent-acp is not installed (npm install)" : false, timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-claude-serve-"));
    const home = join(dir, "home");
    const cwd = join(dir, "project");
    for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
    const logs: string[] = [];
    const server = await serve({
      host: "127.0.0.1",
      port: 0,
      agents: [
        {
          name: "claude",
          command: process.execPath,
          args: [entry!],
          // A fresh HOME (no login, nothing of the machine's user); see
          // test/bridge/claude-agent-acp.test.ts for IS_SANDBOX.
          env: { HOME: home, IS_SANDBOX: "", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" },
        },
      ],
      tokens: [TOKEN],
      auth: true,
      dataDir: join(dir, "data"),
      allowedOrigins: [],
      log: (line) => logs.push(line),
    });
    const updates: SessionNotification[] = [];
    const connection = client({ name: "claude-interop" })
      .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
        updates.push(params);
      })
      .connect(createHttpStream(`${server.url}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    try {
      const init = await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      assert.equal(init.agentInfo?.name, "@agentclientprotocol/claude-agent-acp", logs.join("\n"));
      assert.equal(init.agentCapabilities?.loadSession, true);
      const created = await connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
      assert.equal(typeof created.sessionId, "string");
      // The agent's own session/update (its slash commands) reaches the remote client for that session.
      const deadline = Date.now() + 30_000;
      while (!updates.some((u) => u.sessionId === created.sessionId && u.update.sessionUpdate === "available_commands_update")) {
        assert.ok(Date.now() < deadline, `no available_commands_update; got ${JSON.stringify(updates).slice(0, 500)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(server.hub.status().sessions.find((s) => s.sessionId === created.sessionId)?.agent, "claude");
    } finally {
      connection.close();
      await connection.closed.catch(() => undefined);
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
