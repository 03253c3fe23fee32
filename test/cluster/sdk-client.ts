// The official ACP SDK client against a sidecar or a balancer, over Streamable
// HTTP on h2c (undici's H2CClient: HTTP/2 with prior knowledge, one TCP
// connection) or on HTTP/1.1 (undici's Agent), or the WebSocket profile (`ws`). Its cookie store can be shared
// between connections, so a reconnect carries the affinity cookie the way the
// transport spec asks clients to. Used by the drain, balancer and cluster tests.
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { ClientConnection, InitializeResponse, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import { createHttpStream, MemoryAcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import type { AcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { Agent, fetch as undiciFetch, H2CClient } from "undici";
import type { Dispatcher } from "undici";
import WebSocket from "ws";

/** h2c: HTTP/2 with prior knowledge; http1: Streamable HTTP on HTTP/1.1 (undici's Agent, several connections). */
export type SdkTransport = "h2c" | "http1" | "websocket";

export interface SdkClient {
  readonly connection: ClientConnection;
  /** Every session/update received, in order. */
  readonly updates: SessionNotification[];
  /** Titles of the permission requests answered (always with allow_once). */
  readonly permissions: string[];
  /** initialize with this SDK's protocol version; the result carries the transport's connectionId. */
  initialize(): Promise<InitializeResponse & { connectionId?: string }>;
  /** Ends the connection (DELETE or close frame) and the HTTP/2 connection under it. */
  close(): Promise<void>;
  /**
   * The network goes away under the client: the TCP connection is destroyed
   * without a DELETE or a close frame, so the server only detaches the
   * connection and its sessions stay loadable, as after a real drop.
   */
  drop(): Promise<void>;
}

export interface SdkClientOptions {
  /** Base URL (the sidecar's or the balancer's), without /acp. */
  baseUrl: string;
  token: string;
  transport: SdkTransport;
  /** Shared across connections to keep affinity over a reconnect; a fresh one otherwise. */
  cookies?: AcpCookieStore;
  /** The CA a TLS server's certificate chains to (WebSocket only). */
  ca?: string;
}

export { MemoryAcpCookieStore };

/**
 * The SDK's client application as the tests run it, before it connects: it
 * keeps every session/update in order, and answers every permission request
 * with allow_once, keeping its title.
 */
export function recordingClient(name: string): { app: ReturnType<typeof client>; updates: SessionNotification[]; permissions: string[] } {
  const updates: SessionNotification[] = [];
  const permissions: string[] = [];
  const app = client({ name })
    .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params.toolCall.title ?? "");
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
  return { app, updates, permissions };
}

export function connectSdkClient(options: SdkClientOptions): SdkClient {
  const { app, updates, permissions } = recordingClient("acp-remote-cluster-test");
  const cookieStore = options.cookies ?? new MemoryAcpCookieStore();
  const acpUrl = `${options.baseUrl}/acp`;
  let dispatcher: Dispatcher | undefined;
  let socket: WebSocket | undefined;
  let stream: ReturnType<typeof createHttpStream>;
  if (options.transport !== "websocket") {
    const through: Dispatcher = options.transport === "h2c" ? new H2CClient(options.baseUrl, { pipelining: 100 }) : new Agent();
    dispatcher = through;
    const fetch = ((input: string | URL | Request, init?: RequestInit) =>
      undiciFetch(input as string, { ...(init as object), dispatcher: through } as Parameters<typeof undiciFetch>[1])) as unknown as typeof globalThis.fetch;
    stream = createHttpStream(acpUrl, { headers: { authorization: `Bearer ${options.token}` }, fetch, cookieStore });
  } else {
    // The SDK constructs the WebSocket itself; this subclass keeps it, for drop().
    class KeptWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[], init?: WebSocket.ClientOptions) {
        super(url, protocols, options.ca === undefined ? init : { ...init, ca: options.ca });
        socket = this;
      }
    }
    stream = createWebSocketStream(acpUrl.replace(/^http/, "ws"), {
      WebSocket: KeptWebSocket,
      headers: { authorization: `Bearer ${options.token}` },
      cookieStore,
    }) as typeof stream;
  }
  const connection = app.connect(stream);
  return {
    connection,
    updates,
    permissions,
    initialize: () =>
      connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }) as Promise<
        InitializeResponse & { connectionId?: string }
      >,
    async close() {
      connection.close();
      await connection.closed.catch(() => {});
      await dispatcher?.destroy();
    },
    async drop() {
      if (dispatcher !== undefined) {
        // Destroyed first, so the parting DELETE the client then tries cannot get through.
        await dispatcher.destroy();
      } else {
        socket?.terminate();
      }
      await connection.closed.catch(() => {});
    },
  };
}

/** The value of one cookie in a cookie store, as the client would send it. */
export function cookieValue(store: AcpCookieStore, name: string): string | undefined {
  const headers = new Headers();
  store.apply(headers);
  for (const pair of (headers.get("cookie") ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The text of each update of one kind, in order. */
export function texts(updates: readonly SessionNotification[], kind: SessionUpdate["sessionUpdate"]): string[] {
  return updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => {
      const content: unknown = "content" in u ? u.content : undefined;
      return typeof content === "object" && content !== null && "text" in content && typeof content.text === "string" ? content.text : "";
    });
}

