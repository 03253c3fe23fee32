// The server's requests to the editor, across connections. A server numbers
// the requests of each connection from the start again, so from the second
// connection on the relay rewrites their ids into ones the editor can tell
// apart from those of a connection that is gone, and rewrites them back when
// the editor answers. The server's `$/cancel_request` names the server's id:
// it is rewritten too, or the editor would withdraw the wrong request.
import { Acp } from "../protocol/acp.ts";
import { idKey, isRecord, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from "../protocol/jsonrpc.ts";

/** Prefix of the ids the relay makes up; editors number theirs. */
export const OWN_ID_PREFIX = "acp-remote-connect/";

interface Pending {
  /** The id the server gave. */
  id: JsonRpcId;
  /** The id the editor knows. */
  editorId: JsonRpcId;
  /** The connection it came on. */
  generation: number;
}

export class ServerRequestIds {
  /** By the id the editor knows, oldest first. */
  readonly #pending = new Map<string, Pending>();
  /** Per connection: the id the editor knows, by the server's id. */
  readonly #byServerId = new Map<string, string>();
  readonly #max: number;

  /** `max`: requests kept at most; editors that never answer must not make this grow without end. */
  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** A request of the server on connection `generation`, under the id the editor will see. */
  toEditor(request: JsonRpcRequest, generation: number): JsonRpcRequest {
    const editorId = generation <= 1 ? request.id : `${OWN_ID_PREFIX}c${generation}/${String(request.id)}`;
    const key = idKey(editorId);
    this.#pending.set(key, { id: request.id, editorId, generation });
    this.#byServerId.set(idKey(request.id), key);
    if (this.#pending.size > this.#max) {
      const oldest = this.#pending.keys().next().value;
      if (oldest !== undefined) this.#forget(oldest);
    }
    return editorId === request.id ? request : { ...request, id: editorId };
  }

  /**
   * The server's `$/cancel_request` of connection `generation`, naming the id
   * the editor knows. The request stays known: the editor still answers it.
   */
  cancelToEditor(notification: JsonRpcNotification, generation: number): JsonRpcNotification {
    const params = notification.params;
    const requestId = isRecord(params) ? params["requestId"] : undefined;
    if (typeof requestId !== "string" && typeof requestId !== "number") return notification;
    const key = this.#byServerId.get(idKey(requestId));
    const pending = key === undefined ? undefined : this.#pending.get(key);
    if (pending === undefined || pending.generation !== generation || pending.editorId === requestId) return notification;
    return { ...notification, params: { ...(params as Record<string, unknown>), requestId: pending.editorId } };
  }

  /**
   * The editor's answer with the server's id back: `response` itself when it
   * answers no request of the server's, `undefined` when it answers one of a
   * connection that is gone (the editor was told to cancel it; the new
   * connection does not know it).
   */
  fromEditor(response: JsonRpcResponse, generation: number): { response: JsonRpcResponse } | { stale: true } {
    const key = idKey(response.id);
    const pending = this.#pending.get(key);
    if (pending === undefined) return { response };
    this.#forget(key);
    if (pending.generation !== generation) return { stale: true };
    return { response: { ...response, id: pending.id } };
  }

  /** `$/cancel_request` for each request of connection `generation`: it is gone, they can no longer be answered. */
  cancelsFor(generation: number): JsonRpcNotification[] {
    const cancels: JsonRpcNotification[] = [];
    for (const pending of this.#pending.values()) {
      if (pending.generation !== generation) continue;
      cancels.push({ jsonrpc: "2.0", method: Acp.protocol.cancelRequest, params: { requestId: pending.editorId } });
    }
    // The server-id index is per connection: a new one reuses the ids.
    this.#byServerId.clear();
    return cancels;
  }

  #forget(key: string): void {
    const pending = this.#pending.get(key);
    this.#pending.delete(key);
    if (pending !== undefined && this.#byServerId.get(idKey(pending.id)) === key) this.#byServerId.delete(idKey(pending.id));
  }
}
