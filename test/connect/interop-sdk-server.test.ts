// Interop matrix, part 1: `acp-remote connect` (a real child process, driven
// on stdio by the ACP SDK's client) against the ACP SDK's own server transport
// (`AcpServer`, an SDK agent behind it), over every HTTP flavour and both
// profiles. One case per row: server flavour × --transport.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { agentText, asEditor, spawnConnect, type EditorLog } from "../helpers/connect-child.ts";
import { startSdkServer, type SdkServer, type SdkServerProfile } from "../helpers/sdk-server.ts";
import { testCert } from "../helpers/tls-cert.ts";

interface Row {
  profile: SdkServerProfile;
  transport: "http" | "ws" | "auto";
  /** What the relay reports it runs on. */
  protocol: "h2" | "http/1.1" | "websocket";
}

const rows: Row[] = [
  { profile: "h2c", transport: "http", protocol: "h2" },
  { profile: "h2c", transport: "auto", protocol: "h2" },
  { profile: "h2", transport: "http", protocol: "h2" },
  { profile: "h2", transport: "auto", protocol: "h2" },
  { profile: "h2", transport: "ws", protocol: "websocket" },
  { profile: "http1", transport: "http", protocol: "http/1.1" },
  { profile: "http1", transport: "ws", protocol: "websocket" },
  { profile: "https1", transport: "http", protocol: "http/1.1" },
  { profile: "https1", transport: "ws", protocol: "websocket" },
  { profile: "ws-only", transport: "auto", protocol: "websocket" },
  { profile: "ws-only", transport: "ws", protocol: "websocket" },
];

const servers: SdkServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe("connect ↔ SDK AcpServer", () => {
  for (const row of rows) {
    test(`${row.profile} server, --transport ${row.transport}: initialize, session/new, prompt, permission over ${row.protocol}`, async () => {
      const server = await startSdkServer(row.profile);
      servers.push(server);
      const { certFile } = await testCert();
      const c = spawnConnect([server.url, "--transport", row.transport, "--ca", certFile]);
      try {
        const log: EditorLog = { updates: [], permissions: [] };
        const result = await asEditor(c, log, async (ctx) => {
          const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
          assert.equal(init.protocolVersion, PROTOCOL_VERSION);
          assert.equal(init.agentInfo?.name, "sdk-test-agent");
          const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
          const echo = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo hello remote" }] });
          assert.equal(echo.stopReason, "end_turn");
          const perm = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Run tests" }] });
          assert.equal(perm.stopReason, "end_turn");
          return sessionId;
        });
        assert.equal(agentText(log, result), "hello remoteallow");
        assert.deepEqual(log.permissions, ["Run tests"]);
        // The editor closed stdin: connect ends the connection and exits 0.
        assert.equal(await c.exited, 0);
        assert.match(c.stderr(), new RegExp(`over ${row.protocol.replace("/", "\\/")}`));
        if (row.protocol === "h2") {
          // Spec, Limits 1: POSTs and every GET stream on one TCP connection.
          assert.equal(server.connections(), 1);
        }
        if (row.protocol !== "websocket") {
          const deletes = server.requests.filter((r) => r.method === "DELETE");
          assert.equal(deletes.length, 1, "stdin EOF sends DELETE");
        }
      } finally {
        await c.kill();
      }
    });
  }
});
