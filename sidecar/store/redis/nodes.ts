// The nodes and what they tell each other, in Redis. A node is alive while
// its heartbeat key is there: SET with a TTL, so a killed node disappears on
// its own; a set of the ids seen lets `alive` find them without a scan.
// Events are JSON on one channel; the connection's subscriber receives them
// (itself included) and subscribes again after a reconnect. No secret of the
// nodes is kept here: what they vouch for each other with comes from their
// configuration (sidecar/cluster/node-claim.ts), so that read access to Redis
// is not the power to act for anyone.
import type { NodeInfo, NodeStore, StoreEvent } from "../shared-store.ts";
import { LuaScript, type RedisConnection } from "./connection.ts";
import { keys, PREFIX } from "./keys.ts";
import type { Log } from "../../../protocol/log-line.ts";
import { listen } from "../../../common/listeners.ts";

/** KEYS: the set of node ids. ARGV: prefix. The heartbeats still there; ids whose key ran out leave the set. */
const ALIVE = new LuaScript(`
local alive = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local info = redis.call('GET', ARGV[1] .. 'node:' .. id)
  if info then alive[#alive + 1] = info else redis.call('SREM', KEYS[1], id) end
end
return alive
`);

const EVENT_KINDS: ReadonlySet<string> = new Set<StoreEvent["kind"]>(["devices-changed", "device-revoked", "jobs-pending", "job-removed"]);

function parseEvent(message: string): StoreEvent | undefined {
  try {
    const event = JSON.parse(message) as { kind?: unknown };
    return typeof event === "object" && event !== null && typeof event.kind === "string" && EVENT_KINDS.has(event.kind) ? (event as StoreEvent) : undefined;
  } catch {
    return undefined;
  }
}

export class RedisNodes implements NodeStore {
  readonly #redis: RedisConnection;
  readonly #log: Log;
  readonly #listeners = new Set<(event: StoreEvent) => void>();

  private constructor(redis: RedisConnection, log: Log) {
    this.#redis = redis;
    this.#log = log;
  }

  /** Subscribed before it resolves, so that no event published after the store is open is missed. */
  static async open(redis: RedisConnection, log: Log): Promise<RedisNodes> {
    const nodes = new RedisNodes(redis, log);
    await redis.subscribe(keys.events, (message) => nodes.#deliver(message));
    return nodes;
  }

  #deliver(message: string): void {
    const event = parseEvent(message);
    if (event === undefined) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#log(`store: a listener of ${event.kind} failed: ${error instanceof Error ? error.message : String(error)}`, "error");
      }
    }
  }

  async heartbeat(node: NodeInfo, ttlMs: number): Promise<void> {
    await this.#redis.transaction([
      ["SET", keys.node(node.id), JSON.stringify(node), "PX", Math.max(1, Math.ceil(ttlMs))],
      ["SADD", keys.nodes, node.id],
    ]);
  }

  async leave(nodeId: string): Promise<void> {
    await this.#redis.transaction([
      ["DEL", keys.node(nodeId)],
      ["SREM", keys.nodes, nodeId],
    ]);
  }

  async alive(): Promise<NodeInfo[]> {
    const reply = await this.#redis.eval(ALIVE, [keys.nodes], [PREFIX]);
    return (Array.isArray(reply) ? reply : []).map((info) => JSON.parse(String(info)) as NodeInfo);
  }

  async publish(event: StoreEvent): Promise<void> {
    await this.#redis.command(["PUBLISH", keys.events, JSON.stringify(event)]);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return listen(this.#listeners, listener);
  }
}
