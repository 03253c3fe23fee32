// The SDK's own server transport (`AcpServer` with its Node adapter for
// HTTP/1.1 and WebSocket, and behind test/helpers/h2-adapter.ts for HTTP/2)
// around an agent: the SDK bench agent in the same process (sdk-agent.ts), or
// a bridge to a stdio agent process (sdk-bridge.ts). The peers our relay is
// compared with on the same work.
import http from "node:http";
import http2 from "node:http2";
import type { Duplex } from "node:stream";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";
import { createH2Handler } from "../test/helpers/h2-adapter.ts";
import { createSdkFloodAgent } from "./sdk-agent.ts";

export interface SdkHandlers {
  request(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void;
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

type AgentConnector = ConstructorParameters<typeof AcpServer>[0]["agent"] & object;

/** AcpServer around `agent` (default: the in-process SDK bench agent); `onClose` runs after the server closed. */
export function createSdkHandlers(agent: AgentConnector = createSdkFloodAgent(), onClose: () => Promise<void> = async () => {}): SdkHandlers {
  const acp = new AcpServer({ agent });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const node = createNodeHttpHandler(acp);
  const h2 = createH2Handler((request) => acp.handleRequest(request));
  const upgrade = createNodeWebSocketUpgradeHandler(acp, wss);
  return {
    request(req, res) {
      if (req instanceof http2.Http2ServerRequest) h2(req, res as http2.Http2ServerResponse);
      else node(req, res as http.ServerResponse);
    },
    upgrade,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await acp.close().catch(() => {});
      await onClose();
    },
  };
}
