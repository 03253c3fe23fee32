// The editor's messages that wait for a connection: held in order, bounded,
// and sent once a connection is up.
import type { JsonRpcMessage } from "../protocol/jsonrpc.ts";

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
