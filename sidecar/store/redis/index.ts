// The shared store on Redis, for several sidecars (nodes) behind one address
// (design: decision 5). Loaded only when `serve --store redis://…` asks for it.
//
// Every key is under the prefix "acp-remote:", so that one Redis can hold
// other data too. The scripts compute some names themselves, so the store
// needs one Redis (or one hash slot): Redis Cluster is not supported.
//
//   schema                 string the layout's version (./schema.ts); absent in a store from before versions were kept
//   session:<id>           hash   record: the SessionRecord as JSON; home: the node that runs it (absent: none)
//   sessions               set    every session id (the directory, for all())
//   journal:<id>           list   the session's serialized updates, oldest first; expires
//                                 DEFAULT_STORE_JOURNAL_TTL_MS after the last write
//   journal-bytes:<id>     string bytes in journal:<id>, kept by the same script; same expiry
//   job:<id>               hash   owner, backend, model, request, state, createdAt (the store's clock),
//                                 attempts, member (its place in the queue), node and run (while running:
//                                 who claimed it), status and result (once finished); expires
//                                 DEFAULT_STORE_JOB_EXPIRY_MARGIN_MS after its TTL, in case no node sweeps
//   jobs:created           zset   job id by createdAt (the sweep)
//   jobs:pending:<backend> zset   "<16-digit sequence>:<id>" by createdAt: the backend's queue, oldest first
//   jobs:backends          set    backends whose queue may have jobs
//   jobs:running           set    running job ids (recover)
//   jobs:active:<owner>    set    the owner's pending and running job ids: its size is the count
//                                 checked against the per-owner max
//   jobs:seq               string the sequence of the queue members
//   rate:<key>             hash   tokens, at: a token bucket; expires DEFAULT_STORE_RATE_IDLE_MS after its last use
//   devices                hash   device id → {id, label, digest (base64), createdAt} as JSON
//   devices:used           hash   device id → last use, in ms
//   devices:push           hash   device id → its Web Push subscription (JSON); deleted with the device
//   settings               hash   name → a value made once and shared by every node (the Web Push key pair)
//   node:<id>              string the NodeInfo as JSON; expires with the heartbeat's TTL
//   nodes                  set    node ids seen (alive() drops those whose key ran out)
//   events                 channel StoreEvents as JSON
import { randomUUID } from "node:crypto";
import type { SharedStore } from "../shared-store.ts";
import { RedisConnection, redactedUrl } from "./connection.ts";
import { RedisDeviceStore } from "./devices.ts";
import { RedisJobStore } from "./jobs.ts";
import { RedisNodes } from "./nodes.ts";
import { RedisRates } from "./rates.ts";
import { openSchema } from "./schema.ts";
import { RedisSettingStore } from "./settings.ts";
import { RedisSessionStore } from "./sessions.ts";

export interface RedisStoreOptions {
  nodeId: string;
  log?: (line: string) => void;
  /** How long to keep trying to reach Redis at start, in milliseconds (default DEFAULT_STORE_START_TIMEOUT_MS). */
  startTimeoutMs?: number;
  /** Longest wait for a reply, in milliseconds (default DEFAULT_STORE_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
  /** With rediss://, PEM certificates the server's certificate must chain to (a private CA); the system's CAs when absent. */
  ca?: string;
}

/**
 * The store on the Redis at `url` (redis://[[user]:password@]host[:port][/db],
 * or rediss:// for TLS), at the layout version of this acp-remote; rejects
 * with a clear error when it cannot be reached, or when a newer acp-remote
 * wrote it (StoreVersionError).
 */
export async function openRedisStore(url: string, options: RedisStoreOptions): Promise<SharedStore> {
  const log = options.log ?? (() => undefined);
  const redis = await RedisConnection.open(url, {
    log,
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: options.commandTimeoutMs }),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
  });
  let nodes: RedisNodes;
  try {
    // A store of a newer acp-remote is refused before anything is written to it.
    await openSchema(redis, redactedUrl(url));
    nodes = await RedisNodes.open(redis, log);
  } catch (error) {
    await redis.close();
    throw error;
  }
  // This process's claims of running jobs: a job claimed under another run of
  // this node id is an earlier process's, which is gone.
  const run = randomUUID();
  return {
    kind: "redis",
    nodeId: options.nodeId,
    sessions: new RedisSessionStore(redis),
    jobs: ({ clock, ttlMs }) => new RedisJobStore(redis, { nodeId: options.nodeId, run, clock, ttlMs }),
    rates: (clock) => new RedisRates(redis, clock),
    devices: new RedisDeviceStore(redis),
    settings: new RedisSettingStore(redis),
    nodes,
    available: () => redis.available(),
    onAvailability: (listener) => redis.onAvailability(listener),
    close: () => redis.close(),
  };
}
