// The WebSocket profile of /acp: one JSON-RPC message per text frame, the
// token as the subprotocol `acp.bearer.<token>` (browsers cannot set an
// Authorization header on a WebSocket; the server echoes the protocol back).
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import { isRecord, isResponse } from "../../protocol/jsonrpc.ts";
import { acpUrl, type Endpoint } from "./endpoint.ts";
import { DEFAULT_WS_OPEN_TIMEOUT_MS } from "./limits.ts";
import type { Transport, TransportEvents } from "./transport.ts";
import { WS_TOKEN_SUBPROTOCOL_PREFIX } from "./wire.ts";

export interface Opened {
  transport: Transport;
  /** The answer to `initialize`. */
  initialized: JsonRpcResponse;
}

/**
 * Opens the socket and sends `initialize`. Rejects when the socket cannot be
 * opened (a browser does not say why: a refused token looks like a network
 * failure, so the caller asks elsewhere).
 */
export function openWebSocket(endpoint: Endpoint, events: TransportEvents, initialize: JsonRpcRequest): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const protocols = endpoint.token === null ? [] : [`${WS_TOKEN_SUBPROTOCOL_PREFIX}${endpoint.token}`];
    let ws: WebSocket;
    try {
      ws = new WebSocket(acpUrl(endpoint, "ws"), protocols);
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    let state: "opening" | "open" | "closed" = "opening";
    const timer = setTimeout(() => fail(new Error("the WebSocket did not open in time")), DEFAULT_WS_OPEN_TIMEOUT_MS);
    function fail(error: Error): void {
      if (state !== "opening") return;
      state = "closed";
      clearTimeout(timer);
      ws.close();
      reject(error);
    }
    const transport: Transport = {
      profile: "websocket",
      send(message) {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
      },
      openSession() {
        // The socket carries every session's messages.
      },
      close() {
        state = "closed";
        ws.close(1000);
      },
    };
    ws.addEventListener("open", () => ws.send(JSON.stringify(initialize)));
    ws.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      let message: JsonRpcMessage;
      try {
        const parsed: unknown = JSON.parse(event.data);
        if (!isRecord(parsed)) return;
        message = parsed as unknown as JsonRpcMessage;
      } catch {
        return;
      }
      if (state === "opening") {
        if (isResponse(message) && message.id === initialize.id) {
          state = "open";
          clearTimeout(timer);
          resolve({ transport, initialized: message });
        }
        return;
      }
      if (state === "open") events.onMessage(message);
    });
    ws.addEventListener("error", () => fail(new Error("the WebSocket could not be opened")));
    ws.addEventListener("close", () => {
      if (state === "opening") return fail(new Error("the WebSocket closed while opening"));
      if (state === "closed") return;
      state = "closed";
      events.onClose("dropped");
    });
  });
}
