// The ACP SDK's own server transport (`AcpServer`) with an SDK agent behind it,
// served over one HTTP flavour per instance, on port 0:
//   "http1"   HTTP/1.1 with the SDK's Node adapter, plus WebSocket upgrades
//   "https1"  the same over TLS, offering no ALPN "h2"
//   "h2c"     cleartext HTTP/2 (prior knowledge) through our h2 adapter
//   "h2"      TLS HTTP/2 through our h2 adapter (ALPN h2; HTTP/1.1 and WebSocket too)
//   "ws-only" HTTP/1.1 that answers 405 to everything but the WebSocket upgrade
// Every request is recorded (method, HTTP version, cookies, credentials), so a
// test can check what reached the server.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";
import { createH2Handler } from "./h2-adapter.ts";
import { createSdkAgent, type SdkAgent } from "./sdk-agent.ts";
import { testCert } from "./tls-cert.ts";

export type SdkServerProfile = "http1" | "https1" | "h2c" | "h2" | "ws-only";

export interface RecordedRequest {
  method: string;
  httpVersion: string;
  upgrade: boolean;
  cookie: string | undefined;
  authorization: string | undefined;
  connectionId: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
}

export interface SdkServerOptions {
  /** Required bearer token; others get 401. */
  token?: string;
  /** Set on every answer (and the 101) to a request that does not carry it yet. */
  cookie?: { name: string; value: string };
  /** Share an agent (and its sessions) with another server instance. */
  agent?: SdkAgent;
}

export interface SdkServer {
  url: string;
  /** The bound port (pass it to a new server to restart on the same address). */
  port: number;
  agent: SdkAgent;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  connections: () => number;
  /** Cuts every open socket (a network failure as the client sees it) without stopping the server. */
  dropConnections(): void;
  close(): Promise<void>;
}

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function reply(res: AnyResponse, status: number, headers: Record<string, string>, body: string): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(body);
}

export async function startSdkServer(profile: SdkServerProfile, options: SdkServerOptions = {}, port = 0): Promise<SdkServer> {
  const agent = options.agent ?? createSdkAgent();
  const acp = new AcpServer({ agent: agent.app });
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Duplex>();
  let accepted = 0;
  const wss = new WebSocketServer({ noServer: true });
  const nodeHandler = createNodeHttpHandler(acp);
  const h2Handler = createH2Handler((request) => acp.handleRequest(request));
  const upgradeHandler = createNodeWebSocketUpgradeHandler(acp, wss);

  const record = (req: AnyRequest, upgrade: boolean): void => {
    requests.push({
      method: req.method ?? "",
      httpVersion: req.httpVersion,
      upgrade,
      cookie: one(req.headers["cookie"]),
      authorization: one(req.headers["authorization"]),
      connectionId: one(req.headers["acp-connection-id"]),
      sessionId: one(req.headers["acp-session-id"]),
      protocolVersion: one(req.headers["acp-protocol-version"]),
    });
  };
  const authorized = (req: AnyRequest): boolean => options.token === undefined || one(req.headers["authorization"]) === `Bearer ${options.token}`;
  const cookieToSet = (req: AnyRequest): string | undefined => {
    const c = options.cookie;
    if (c === undefined) return undefined;
    const has = (one(req.headers["cookie"]) ?? "").split(/;\s*/).includes(`${c.name}=${c.value}`);
    return has ? undefined : `${c.name}=${c.value}; Path=/acp; HttpOnly`;
  };

  const onRequest = (req: AnyRequest, res: AnyResponse): void => {
    record(req, false);
    if (!authorized(req)) {
      reply(res, 401, { "content-type": "text/plain", "www-authenticate": "Bearer" }, "missing or wrong bearer token");
      return;
    }
    const setCookie = cookieToSet(req);
    if (setCookie !== undefined) res.setHeader("set-cookie", [setCookie]);
    if (profile === "ws-only") {
      reply(res, 405, { "content-type": "text/plain", allow: "GET" }, "only WebSocket here");
      return;
    }
    if (req instanceof http2.Http2ServerRequest) h2Handler(req, res as http2.Http2ServerResponse);
    else nodeHandler(req, res as http.ServerResponse);
  };

  const pendingCookie = new WeakMap<http.IncomingMessage, string>();
  wss.on("headers", (headers, req) => {
    const c = pendingCookie.get(req);
    if (c !== undefined) headers.push(`Set-Cookie: ${c}`);
  });
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    record(req, true);
    if (!authorized(req)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      return;
    }
    const setCookie = cookieToSet(req);
    if (setCookie !== undefined) pendingCookie.set(req, setCookie);
    upgradeHandler(req, socket, head);
  };

  let server: http.Server | https.Server | http2.Http2Server | http2.Http2SecureServer;
  switch (profile) {
    case "http1":
    case "ws-only":
      server = http.createServer(onRequest);
      break;
    case "https1": {
      const { cert, key } = await testCert();
      server = https.createServer({ cert, key }, onRequest);
      break;
    }
    case "h2c":
      server = http2.createServer(onRequest);
      break;
    case "h2": {
      const { cert, key } = await testCert();
      server = http2.createSecureServer({ cert, key, allowHTTP1: true }, onRequest);
      break;
    }
  }
  server.on("upgrade", onUpgrade);
  server.on("connection", (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Sessions of the h2 servers hold their sockets; destroying the socket ends them.
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : 0;
  const scheme = profile === "https1" || profile === "h2" ? "https" : "http";
  return {
    url: `${scheme}://127.0.0.1:${boundPort}/acp`,
    port: boundPort,
    agent,
    requests,
    connections: () => accepted,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await acp.close().catch(() => {});
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
