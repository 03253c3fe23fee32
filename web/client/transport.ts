// A link to /acp that carries JSON-RPC messages, whichever profile it uses
// (WebSocket, or Streamable HTTP when a WebSocket cannot be opened).
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";

/** Why a link ended: the network (worth reconnecting) or the token (ask for a new one). */
export type LinkEnd = "dropped" | "unauthorized";

export interface Transport {
  /** "websocket" or "http", for the page's status and tests. */
  readonly profile: "websocket" | "http";
  /** Sends one message; `sessionId` names the session it belongs to (Streamable HTTP sends it as a header). */
  send(message: JsonRpcMessage, sessionId?: string): void;
  /** Streamable HTTP opens one stream per session; a WebSocket carries every session already. */
  openSession(sessionId: string): void;
  /** Ends the link; no `onClose` follows. */
  close(): void;
}

export interface TransportEvents {
  onMessage(message: JsonRpcMessage): void;
  /** The link ended by itself (not by `close()`). */
  onClose(end: LinkEnd): void;
}

/** Thrown by a transport's `open` when the server refused the token. */
export class UnauthorizedError extends Error {
  constructor() {
    super("the token was refused");
    this.name = "UnauthorizedError";
  }
}
