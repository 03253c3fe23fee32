// The editor's requests sent to the server and not yet answered, which the
// relay's `end()` waits for before it closes.
import { idKey, type JsonRpcId, type JsonRpcRequest } from "../protocol/jsonrpc.ts";

/** Editor requests sent to the server and not yet answered. */
export class InFlightRequests {
  readonly #requests = new Map<string, JsonRpcRequest>();
  #drainWaiters: Array<() => void> = [];

  get size(): number {
    return this.#requests.size;
  }

  add(request: JsonRpcRequest): void {
    this.#requests.set(idKey(request.id), request);
  }

  /** The request with this id, no longer in flight; undefined when none was. */
  take(id: JsonRpcId): JsonRpcRequest | undefined {
    const key = idKey(id);
    const request = this.#requests.get(key);
    if (request === undefined) return undefined;
    this.#requests.delete(key);
    this.#checkDrained();
    return request;
  }

  /** Every request in flight; none are afterwards. */
  takeAll(): JsonRpcRequest[] {
    const requests = [...this.#requests.values()];
    this.#requests.clear();
    this.#checkDrained();
    return requests;
  }

  /** Resolves once no request is in flight. */
  drained(): Promise<void> {
    if (this.#requests.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #checkDrained(): void {
    if (this.#requests.size > 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
