// The relay's own requests on a connection (initialize and session/load
// again after a reconnect): numbered apart from the editor's, and their
// answers kept from the editor.
import { idKey, type JsonRpcResponse } from "../protocol/jsonrpc.ts";
import { OWN_ID_PREFIX } from "./server-request-ids.ts";
import { ClientTransportError, TransportErrorCode, type ClientTransport } from "./transport.ts";

export class RelayRequests {
  readonly #waiting = new Map<string, { resolve: (r: JsonRpcResponse) => void; reject: (e: Error) => void }>();
  #seq = 0;

  /** Sends a request of the relay's own on `transport`; resolves with its answer. */
  request(transport: ClientTransport | undefined, method: string, params: unknown): Promise<JsonRpcResponse> {
    const id = `${OWN_ID_PREFIX}${++this.#seq}`;
    return new Promise((resolve, reject) => {
      if (transport === undefined) {
        reject(new ClientTransportError(TransportErrorCode.Closed, "no connection"));
        return;
      }
      this.#waiting.set(idKey(id), { resolve, reject });
      transport.send({ jsonrpc: "2.0", id, method, params }).catch((error: unknown) => {
        this.#waiting.delete(idKey(id));
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** Takes an answer from the server if it is one to a request of the relay's own. */
  answer(response: JsonRpcResponse): boolean {
    const key = idKey(response.id);
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) return false;
    this.#waiting.delete(key);
    waiting.resolve(response);
    return true;
  }

  /** The connection is gone: every request waiting fails. */
  failAll(error: Error): void {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of waiting) w.reject(error);
  }
}
