// The raw baseline: plain node:http2 / node:http SSE and `ws`, with just
// enough routing to follow the transport's message flow (initialize answers a
// connection id, session/new a session id, a prompt writes its updates on the
// session stream and then its response), and no protocol logic: no
// validation, no hub, no agent process, messages built from a template. The
// updates of a flood are written as fast as the client reads them (each write
// waits for `drain` when the socket's buffer is full). Its rates are the upper
// limit of what Node does with these sockets on this machine.
//
// It also answers the /v1 deferred endpoints with a bare 202, the baseline of
// the deferred service's request rate.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { HttpRequest, HttpResponse } from "../sidecar/http/types.ts";
import { Acp, Header, MediaType, PROTOCOL_VERSION } from "../protocol/acp.ts";
import { drainedOrClosed } from "../test/helpers/drained.ts";
import { parsePromptScript, updateMessage } from "./prompt-script.ts";

type AnyRequest = HttpRequest;
type AnyResponse = HttpResponse;

/** Bytes a WebSocket may hold unsent before a flood waits for the socket to take them. */
const WS_HIGH_WATER_BYTES = 256 * 1024;

/** Where the messages of one stream go. */
interface Sink {
  /** Resolves at once, or when the socket has taken what it holds. */
  write(text: string): void | Promise<void>;
}

interface RawConnection {
  connection?: Sink;
  sessions: Map<string, Sink | undefined>;
  streams: Set<AnyResponse>;
}

function sseSink(res: AnyResponse): Sink {
  return {
    write(text) {
      if (res.write(`data: ${text}\n\n`)) return;
      return drainedOrClosed(res);
    },
  };
}

function wsSink(ws: WebSocket): Sink {
  return {
    write(text) {
      if (ws.bufferedAmount < WS_HIGH_WATER_BYTES) {
        ws.send(text);
        return;
      }
      return new Promise<void>((resolve) => ws.send(text, () => resolve()));
    },
  };
}

function response(id: unknown, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result });
}

/** Runs a prompt's script on `sink`, then writes its response. */
async function prompt(sink: Sink | undefined, id: unknown, sessionId: string, text: string): Promise<void> {
  if (sink === undefined) return;
  const script = parsePromptScript(text);
  const update = updateMessage(sessionId, "x".repeat(script.bytes));
  for (let i = 0; i < script.count; i++) {
    const waited = sink.write(script.kind === "echo" ? updateMessage(sessionId, script.text) : update);
    if (waited !== undefined) await waited;
  }
  await sink.write(response(id, { stopReason: "end_turn" }));
}

export interface RawHandlers {
  request(req: AnyRequest, res: AnyResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

export function createRawHandlers(): RawHandlers {
  const connections = new Map<string, RawConnection>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  const readBody = (req: AnyRequest): Promise<string> =>
    new Promise((resolve, reject) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => resolve(body));
      req.on("error", reject);
    });

  const header = (req: AnyRequest, name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };

  const acpPost = async (req: AnyRequest, res: AnyResponse): Promise<void> => {
    const message = JSON.parse(await readBody(req)) as { id?: unknown; method?: string; params?: { sessionId?: string; prompt?: Array<{ text?: string }> } };
    if (message.method === Acp.agent.initialize) {
      const connectionId = randomUUID();
      connections.set(connectionId, { sessions: new Map(), streams: new Set() });
      const body = response(message.id, { protocolVersion: PROTOCOL_VERSION, agentCapabilities: {}, connectionId });
      res.writeHead(200, { [Header.ContentType]: MediaType.Json, [Header.ConnectionId]: connectionId, "content-length": Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const connection = connections.get(header(req, Header.ConnectionId) ?? "");
    res.writeHead(connection === undefined ? 404 : 202, { "content-length": 0 });
    res.end();
    if (connection === undefined) return;
    if (message.method === Acp.agent.session.new) {
      const sessionId = randomUUID();
      connection.sessions.set(sessionId, undefined);
      await connection.connection?.write(response(message.id, { sessionId }));
    } else if (message.method === Acp.agent.session.prompt) {
      const sessionId = message.params?.sessionId ?? "";
      await prompt(connection.sessions.get(sessionId), message.id, sessionId, message.params?.prompt?.[0]?.text ?? "");
    }
  };

  const acpGet = (req: AnyRequest, res: AnyResponse): void => {
    const id = header(req, Header.ConnectionId) ?? "";
    const connection = connections.get(id);
    if (connection === undefined) {
      res.writeHead(404, { "content-length": 0 });
      res.end();
      return;
    }
    res.writeHead(200, { [Header.ContentType]: MediaType.EventStream, "cache-control": "no-store" });
    // Headers go out now, not with the first event.
    res.flushHeaders?.();
    const sink = sseSink(res);
    const sessionId = header(req, Header.SessionId);
    if (sessionId === undefined) connection.connection = sink;
    else connection.sessions.set(sessionId, sink);
    connection.streams.add(res);
    res.on("close", () => connection.streams.delete(res));
  };

  const acpDelete = (req: AnyRequest, res: AnyResponse): void => {
    const id = header(req, Header.ConnectionId) ?? "";
    const connection = connections.get(id);
    connections.delete(id);
    for (const stream of connection?.streams ?? []) stream.end();
    res.writeHead(202, { "content-length": 0 });
    res.end();
  };

  /** /v1: the deferred endpoints answer 202 without looking further (the floor of any request rate). */
  const v1 = (req: AnyRequest, res: AnyResponse): void => {
    req.resume();
    req.on("end", () => {
      res.writeHead(202, { "content-length": 0 });
      res.end();
    });
  };

  return {
    request(req, res) {
      const path = (req.url ?? "/").split("?")[0];
      if (path?.startsWith("/v1/")) return v1(req, res);
      if (req.method === "POST") {
        acpPost(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(400, { "content-length": 0 });
          res.end();
        });
      } else if (req.method === "GET") acpGet(req, res);
      else if (req.method === "DELETE") acpDelete(req, res);
      else {
        res.writeHead(405, { "content-length": 0 });
        res.end();
      }
    },
    upgrade(req, socket, head) {
      const connectionId = randomUUID();
      wss.once("headers", (headers) => headers.push(`${Header.ConnectionId}: ${connectionId}`));
      wss.handleUpgrade(req, socket, head, (ws) => {
        const sink = wsSink(ws);
        const sessions = new Set<string>();
        ws.on("message", (data) => {
          const message = JSON.parse(data.toString()) as { id?: unknown; method?: string; params?: { sessionId?: string; prompt?: Array<{ text?: string }> } };
          if (message.method === Acp.agent.initialize) {
            void sink.write(response(message.id, { protocolVersion: PROTOCOL_VERSION, agentCapabilities: {}, connectionId }));
          } else if (message.method === Acp.agent.session.new) {
            const sessionId = randomUUID();
            sessions.add(sessionId);
            void sink.write(response(message.id, { sessionId }));
          } else if (message.method === Acp.agent.session.prompt) {
            const sessionId = message.params?.sessionId ?? "";
            void prompt(sessions.has(sessionId) ? sink : undefined, message.id, sessionId, message.params?.prompt?.[0]?.text ?? "");
          }
        });
        ws.on("error", () => {});
      });
    },
    close() {
      for (const connection of connections.values()) for (const stream of connection.streams) stream.end();
      connections.clear();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
