// This node's presence among the nodes of a shared store: a heartbeat with a
// TTL, so that when a node dies (kill -9, a lost machine) its key runs out and
// the others take its sessions and deferred jobs over; a clean stop says so
// at once. The set of live nodes is read fresh for every decision that hands
// work from one node to another, never from a cache.
import type { NodeInfo, SharedStore } from "../store/shared-store.ts";
import { DEFAULT_NODE_HEARTBEAT_MS, DEFAULT_NODE_TTL_MS } from "./limits.ts";
import type { Log } from "../../protocol/log-line.ts";

export class NodePresence {
  readonly #store: SharedStore;
  #info: NodeInfo;
  readonly #ttlMs: number;
  readonly #timer: NodeJS.Timeout;
  readonly #log: Log;
  #stopped = false;
  #wasDown = false;

  private constructor(store: SharedStore, info: NodeInfo, options: { heartbeatMs: number; ttlMs: number; log: Log }) {
    this.#store = store;
    this.#info = info;
    this.#ttlMs = options.ttlMs;
    this.#log = options.log;
    this.#timer = setInterval(() => void this.#beat(), options.heartbeatMs);
    this.#timer.unref();
  }

  /** Announces the node (the first heartbeat is written before this resolves) and keeps it alive. */
  static async start(
    store: SharedStore,
    info: NodeInfo,
    options: { heartbeatMs?: number; ttlMs?: number; log?: Log } = {},
  ): Promise<NodePresence> {
    const presence = new NodePresence(store, info, {
      heartbeatMs: options.heartbeatMs ?? DEFAULT_NODE_HEARTBEAT_MS,
      ttlMs: options.ttlMs ?? DEFAULT_NODE_TTL_MS,
      log: options.log ?? (() => undefined),
    });
    await store.nodes.heartbeat(info, presence.#ttlMs);
    return presence;
  }

  /** The URL the other nodes reach this one at, known once it listens. */
  async advertise(url: string): Promise<void> {
    this.#info = { ...this.#info, url };
    await this.#store.nodes.heartbeat(this.#info, this.#ttlMs);
  }

  /** How long the node counts as alive after a heartbeat, in milliseconds. */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  get nodeId(): string {
    return this.#info.id;
  }

  /** The ids of the nodes alive now, this one included. */
  async liveNodes(): Promise<ReadonlySet<string>> {
    return new Set((await this.#store.nodes.alive()).map((n) => n.id));
  }

  /** Where a live node is reached; undefined when it is not alive. */
  async nodeUrl(nodeId: string): Promise<string | undefined> {
    return (await this.#store.nodes.alive()).find((n) => n.id === nodeId)?.url;
  }

  /** Stops the heartbeat and says the node is gone, so its sessions are taken over at once. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#store.nodes.leave(this.#info.id).catch(() => undefined);
  }

  async #beat(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#store.nodes.heartbeat(this.#info, this.#ttlMs);
      if (this.#wasDown) this.#log(`acp-remote: node ${this.#info.id} reaches the store again`);
      this.#wasDown = false;
    } catch (error) {
      if (!this.#wasDown) this.#log(`acp-remote: node ${this.#info.id} cannot reach the store: ${error instanceof Error ? error.message : String(error)}`, "warn");
      this.#wasDown = true;
    }
  }
}
