// The contract between the remote transport (/acp, both profiles) and the hub
// that multiplexes remote sessions onto shared agent processes. The transport
// knows HTTP, streams and WebSockets; the hub knows sessions, agents, journals
// and permissions. Neither reaches into the other.
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../jsonrpc.ts";

/** Who is calling: derived from the credential, never from a transport id. */
export interface Principal {
  /** Stable, non-secret id of the credential (e.g. a hash prefix of the token). */
  readonly id: string;
  /** Human label for logs and views ("token", "editor", a configured key name). */
  readonly label: string;
}

/** One remote connection as the hub sees it; each transport profile implements it. */
export interface ClientLink {
  readonly connectionId: string;
  readonly principal: Principal;
  /** "http2", "http1" or "websocket", for views and logs. */
  readonly profile: string;
  /**
   * Delivers one message to the remote client. With `sessionId` it belongs on
   * that session's stream (Streamable HTTP); without, on the connection stream
   * (spec: POST /acp, "Which stream carries the response"). A WebSocket carries
   * both on its one socket.
   */
  send(message: JsonRpcMessage, sessionId?: string): void;
}

/** What the transport asks of the hub about a session id it was given. */
export type SessionAccess =
  /** Attached to this connection. */
  | "attached"
  /** Known to the server, owned by the same principal, not attached here (resume flow). */
  | "loadable"
  /** Unknown, ended, or owned by another principal: answered as unknown (404). */
  | "unknown";

export interface HubConnection {
  /**
   * Answers the client's `initialize` request with the agent's capabilities
   * (as the sidecar offers them: `loadSession` is always true, the journal
   * replays). The transport adds `connectionId` to the result.
   */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** One message the client sent after initialize, already checked to be a single JSON-RPC message. */
  receive(message: JsonRpcMessage): void;
  /** What this connection may do with a session id. */
  sessionAccess(sessionId: string): SessionAccess;
  /** The network dropped: sessions detach, keep running and journal what they emit. */
  detach(): void;
  /** DELETE (or server shutdown): the connection and all its sessions end for good. */
  close(): void;
}

export interface Hub {
  /** Opens the hub side of a new remote connection. */
  connect(link: ClientLink): HubConnection;
  /** Ends every agent and session; used on shutdown. */
  shutdown(): Promise<void>;
}
