// The editor's messages while they are with the relay: those waiting for a
// connection (held, bounded) and the requests sent to the server and not yet
// answered (in flight), which `end()` waits for before it closes.
import { idKey, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from "../protocol/jsonrpc.ts";

/** Editor messages waiting for a connection, at most `max`. */
export class HeldMessages {
  readonly max: number;
  #held: JsonRpcMessage[] = [];

  constructor(max: number) {
    this.max = max;
  }

  /** False when `max` messages wait already: the message is not held. */
  push(message: JsonRpcMessage): boolean {
    if (this.#held.length >= this.max) return false;
    this.#held.push(message);
    return true;
  }

  /** Every held message, oldest first; none are held afterwards. */
  takeAll(): JsonRpcMessage[] {
    const held = this.#held;
    this.#held = [];
    return held;
  }
}

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
