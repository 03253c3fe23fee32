// A WebSocket client that floods messages while `initialize` waits on the
// agent: the server stops reading the socket once DEFAULT_WS_MAX_INBOUND_*
// messages wait, so the flood stays in the client's buffers (TCP backpressure)
// instead of the server's memory. Real sidecar, real agent process that never
// answers, real `ws` client.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { Acp, PROTOCOL_VERSION, WS_TOKEN_SUBPROTOCOL_PREFIX } from "../../protocol/acp.ts";
import { DEFAULT_WS_MAX_INBOUND_BYTES } from "../../sidecar/limits.ts";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";

const TOKEN = "ws-inbound-token-0123456789";
const FIXTURE_AGENT = fileURLToPath(new URL("../fixtures/agent.ts", import.meta.url));
const MESSAGE_BYTES = 64 * 1024;
/** Eight times the server's bound: what the server may not hold. */
const FLOOD_BYTES = 8 * DEFAULT_WS_MAX_INBOUND_BYTES;

/** Resolves with the client's unsent bytes once they stop going down for `quietMs` (the server stopped reading) or reach 0. */
async function settledBufferedAmount(ws: WebSocket, quietMs: number, deadlineMs: number): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  let last = ws.bufferedAmount;
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    const now = ws.bufferedAmount;
    if (now === 0) return 0;
    if (now < last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return now;
  }
  return ws.bufferedAmount;
}

describe("WebSocket: messages that arrive while initialize waits on the agent", () => {
  let server: RunningServer;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acp-ws-inbound-"));
    server = await serve({
      host: "127.0.0.1",
      port: 0,
      // The agent reads stdin and answers nothing: initialize waits.
      agents: [{ name: "silent", command: process.execPath, args: [FIXTURE_AGENT], env: { FIXTURE_AGENT_SILENT: "1" } }],
      tokens: [TOKEN],
      auth: true,
      dataDir,
      allowedOrigins: [],
      log: () => {},
    });
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("regression: frames queued without limit while initialize waited; the server now stops reading past its bound", async () => {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/acp`, [`${WS_TOKEN_SUBPROTOCOL_PREFIX}${TOKEN}`]);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } }));
      const pad = "x".repeat(MESSAGE_BYTES);
      for (let sent = 0; sent < FLOOD_BYTES; sent += MESSAGE_BYTES) {
        ws.send(JSON.stringify({ jsonrpc: "2.0", method: "flood/note", params: { pad } }));
      }
      const unsent = await settledBufferedAmount(ws, 750, 20_000);
      // The server holds at most its bound (plus one read) and the kernel some socket buffer; the rest must wait at the client.
      assert.ok(unsent > FLOOD_BYTES / 2, `the server kept reading: ${unsent} of ${FLOOD_BYTES} bytes left unsent`);
    } finally {
      ws.terminate();
    }
  });
});
