// `acp-remote connect` over HTTP/2 while the sidecar restarts: the server
// ends the connection with GOAWAY, and what connect logs says so in words a
// person reads, not in HTTP/2's ("New streams cannot be created after
// receiving a GOAWAY", "NGHTTP2_REFUSED_STREAM"). The real sidecar with its
// fixture agent, stopped and started again on the same port and data folder;
// connect as a child process driven by the SDK's client.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { asEditor, spawnConnect, type EditorLog } from "../helpers/connect-child.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-restart-"));
const servers: RunningServer[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  for (const s of servers) await s.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<RunningServer> {
  const server = await serveFixtureAgent({ tokens: [TOKEN], dataDir, port });
  servers.push(server);
  return server;
}

test('regression: a restarting server was logged as "GET failed: New streams cannot be created after receiving a GOAWAY"; connect says the server is restarting', async () => {
  const first = await start(0);
  const c = spawnConnect([first.url, "--transport", "http"], { ACP_REMOTE_TOKEN: TOKEN });
  cleanups.push(() => c.kill());
  const log: EditorLog = { updates: [], permissions: [] };
  await asEditor(c, log, async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    await c.waitForLog(/over h2 /);
    await first.close();
    await c.waitForLog("connection lost");
    await start(first.port);
    await c.waitForLog("reconnected");
    // The session goes on on the restarted server.
    const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo after the restart" }] });
    assert.equal(stopReason, "end_turn");
  });
  assert.equal(await c.exited, 0);
  const lost = c.stderr().split("\n").find((line) => line.includes("connection lost")) ?? "";
  assert.match(lost, /the server is restarting or shutting down/);
  assert.doesNotMatch(c.stderr(), /GOAWAY|NGHTTP2|New streams cannot be created/);
});
