// The NodeStore of a store that one process owns: this node is the only one
// alive, and events go to this process's own listeners.
import { listen } from "../../common/listeners.ts";
import type { NodeInfo, NodeStore, StoreEvent } from "./shared-store.ts";

export class LocalNodes implements NodeStore {
  readonly #listeners = new Set<(event: StoreEvent) => void>();
  #self: NodeInfo | undefined;

  async heartbeat(node: NodeInfo): Promise<void> {
    this.#self = node;
  }

  async leave(): Promise<void> {
    this.#self = undefined;
  }

  async alive(): Promise<NodeInfo[]> {
    return this.#self === undefined ? [] : [this.#self];
  }

  async publish(event: StoreEvent): Promise<void> {
    for (const listener of this.#listeners) listener(event);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return listen(this.#listeners, listener);
  }
}
