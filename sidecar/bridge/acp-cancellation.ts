// ACP's request cancellation over vscode-jsonrpc: ACP names it
// `$/cancel_request` with `{ requestId }`, LSP (and vscode-jsonrpc)
// `$/cancelRequest` with `{ id }`. These adapters let a MessageConnection speak
// the ACP form in both directions.
import {
  CancellationTokenSource,
  Message,
  type CancellationId,
  type CancellationStrategy,
  type MessageStrategy,
} from "vscode-jsonrpc/node";
import { Acp } from "../../protocol/acp.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";

/**
 * ACP names its cancellation `$/cancel_request` with `{ requestId }` (LSP says
 * `$/cancelRequest` with `{ id }`). Outbound: an aborted request sends the ACP
 * form. Inbound: every request's token source is kept by id so that
 * acpCancelReceiver can cancel it.
 */
export function acpCancellationStrategy(sources: Map<CancellationId, CancellationTokenSource>): CancellationStrategy {
  return {
    receiver: {
      createCancellationTokenSource(id: CancellationId) {
        const source = new CancellationTokenSource();
        sources.set(id, source);
        return source;
      },
    },
    sender: {
      sendCancellation(connection, id) {
        return connection.sendNotification(Acp.protocol.cancelRequest, { requestId: id });
      },
      cleanup() {},
    },
  };
}

/** Turns an incoming `$/cancel_request` into the cancellation of the request's token, and forgets tokens of finished requests. */
export function acpCancelReceiver(sources: Map<CancellationId, CancellationTokenSource>): MessageStrategy {
  return {
    handleMessage(message, next) {
      if (Message.isNotification(message) && message.method === Acp.protocol.cancelRequest) {
        const params = message.params;
        const id = isRecord(params) ? params["requestId"] : undefined;
        if (typeof id === "string" || typeof id === "number") sources.get(id)?.cancel();
        return;
      }
      const result = next(message);
      if (Message.isRequest(message)) {
        const id = message.id;
        const forget = (): void => {
          if (id !== null) sources.delete(id);
        };
        if (result instanceof Promise) result.then(forget, forget);
        else forget();
      }
      return result;
    },
  };
}
