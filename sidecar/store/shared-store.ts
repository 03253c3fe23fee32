// What several sidecars behind one address must share, as one interface with
// two implementations (design: decision 5): node:sqlite, the embedded default
// for one process (./sqlite/), and Redis for several (./redis/). Everything
// that must be shared goes through it, and nothing else reads Redis. The same
// table of tests runs against both (test/store/).
//
// Every method is asynchronous, because Redis is a network away; the SQLite
// implementation answers at once. A method whose store cannot be reached
// rejects with StoreUnavailableError, which /acp and /v1 turn into 503.
/** A session as the store keeps it: enough to list it, load it, and re-create its agent session anywhere. */
export interface SessionRecord {
  id: string;
  agent: string;
  cwd: string;
  /** Folders the session may touch: cwd and its additional directories. */
  roots: string[];
  /** `mcpServers` of session/new, given again when the agent session is re-created. */
  mcpServers: unknown[];
  ownerId: string;
  ownerLabel: string;
  createdAt: number;
  updatedAt: number;
  /** What lists name it by: the agent's title, else `promptTitle` (sidecar/hub/session-titles.ts). */
  title?: string;
  /** The start of its first prompt, the title when the agent gives none or clears its own. */
  promptTitle?: string;
  /** The session's id inside the agent, last known; tried with the agent's session/load after a restart. */
  agentSessionId?: string;
}

/**
 * One flush of one session's journal: the newest stored entries dropped (a
 * compacted turn replaces them), the last stored entry rewritten (it grew by
 * merging), then new ones; in that order.
 */
export interface JournalWrite {
  sessionId: string;
  /** How many of the newest stored entries go first (fewer when fewer are stored). */
  dropLast?: number;
  /** The new text of the newest stored entry, when it changed. */
  replaceLast?: string;
  /** New entries, oldest first, each one serialized `session/update`. */
  append: string[];
}

export interface JournalBounds {
  /** Entries kept per session; the oldest go first (the newest always stays). */
  maxEntries: number;
  /** Bytes of serialized entries kept per session. */
  maxBytes: number;
}

/** The session directory and the journals. */
export interface SessionStore {
  /**
   * Stores the record of a new session unless a session of that id is
   * stored already (by any node, for anyone), in one atomic step: false
   * when the id is taken. Public ids are unique across the nodes this way.
   */
  create(record: SessionRecord): Promise<boolean>;
  /**
   * Writes the record through (a new title, the last use, the agent-side id),
   * in one atomic step with the check that the id is not another person's:
   * false, and nothing written, when the stored record has another owner.
   */
  save(record: SessionRecord): Promise<boolean>;
  get(id: string): Promise<SessionRecord | undefined>;
  /** Every session the store knows, on every node. */
  all(): Promise<SessionRecord[]>;
  /** The record, its journal and its home are gone. */
  delete(id: string): Promise<void>;
  /** Writes several sessions' journal changes, each trimmed to the bounds. */
  writeJournal(writes: JournalWrite[], bounds: JournalBounds): Promise<void>;
  /** The session's journal, oldest first, as serialized updates. */
  journal(id: string): Promise<string[]>;
  /** The newest `count` entries of the session's journal (all when fewer are stored), oldest first. */
  journalTail(id: string, count: number): Promise<string[]>;
  /** The node that runs the session's agent; undefined when none claims it. */
  home(id: string): Promise<string | undefined>;
  /**
   * Makes `node` the session's home if its home is still `expected`
   * (undefined: no home), in one atomic step; false when another node got there first.
   */
  claimHome(id: string, node: string, expected: string | undefined): Promise<boolean>;
  /** Gives the session up (a draining node), if `node` is still its home. */
  releaseHome(id: string, node: string): Promise<void>;
}

export type JobState = "pending" | "running" | "done" | "failed";

export interface Job {
  id: string;
  /** Principal id of the key that created it; another key is told 404. */
  owner: string;
  /** Concurrency key of the backend that runs it. */
  backend: string;
  model: string;
  /** The validated request, as JSON. */
  request: string;
  /** Milliseconds since the epoch, from the injected clock. */
  createdAt: number;
  attempts: number;
}

export type Retrieval =
  | { kind: "ready"; status: number; body: unknown }
  | { kind: "pending" }
  /** Unknown, already retrieved, expired, or another key's: all the same 404. */
  | { kind: "gone" };

/** A job deleted by cancel or sweep. */
export interface Removed {
  id: string;
  owner: string;
  /** It was pending or running. */
  active: boolean;
}

/**
 * Deferred completions (design: Deferred completions). A job goes
 *
 *   pending ──claim──▶ running ──▶ done | failed ──take──▶ (deleted)
 *
 * and is deleted once older than the TTL whatever its state. `take` is
 * exactly once across every process on the store: of any number of
 * concurrent takes, one gets the result and the others find nothing.
 */
export interface JobStore {
  /**
   * Jobs whose runner is gone (this process crashed, or, on a shared store,
   * the node that ran them): failed with `body` once started `maxAttempts`
   * times, else pending again. Returns how many went back to pending.
   */
  recover(maxAttempts: number, body: unknown): Promise<number>;
  /** Backends with pending jobs. */
  pendingBackends(): Promise<string[]>;
  /**
   * A new pending job; resolves with its id once it is stored, or with
   * undefined when `owner` has `maxActive` jobs pending or running already
   * (checked and inserted in one atomic step).
   */
  insert(owner: string, backend: string, model: string, request: unknown, maxActive: number): Promise<string | undefined>;
  /** The result exactly once, "pending" while it runs, "gone" otherwise. */
  take(owner: string, id: string): Promise<Retrieval>;
  state(owner: string, id: string): Promise<JobState | undefined>;
  /** Deletes the job in any state; undefined when it is gone. */
  delete(owner: string, id: string): Promise<Removed | undefined>;
  /** Deletes every job older than the TTL. */
  expire(): Promise<Removed[]>;
  /** Picks and claims (running, attempts + 1) the oldest pending job of `backend`, for this node. */
  claim(backend: string): Promise<Job | undefined>;
  /** A running job's outcome; false when it is no longer running (cancelled, expired, taken over). */
  finish(id: string, state: "done" | "failed", status: number, body: unknown): Promise<boolean>;
  /** A running job back to pending, its attempt not counted (graceful stop). */
  release(id: string): Promise<void>;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Per-person request buckets, shared so that the limit holds across nodes. */
export interface RateStore {
  /** Takes one request from `key`'s bucket of `perMinute` requests, or says how long until one is there. */
  take(key: string, perMinute: number): Promise<RateDecision>;
}

/** A paired device as stored: the digest of its token, never the token. */
export interface StoredDevice {
  id: string;
  label: string;
  digest: Buffer;
  createdAt: number;
  lastUsedAt?: number;
}

/** A paired device's Web Push subscription: the browser's PushSubscription as JSON, as the device sent it. */
export interface StoredPush {
  deviceId: string;
  subscription: string;
}

export interface DeviceStore {
  all(): Promise<StoredDevice[]>;
  /** Adds the device unless `max` are paired already; false then. */
  insert(device: StoredDevice, max: number): Promise<boolean>;
  /** False when it was not there. Its Web Push subscription goes with it. */
  delete(id: string): Promise<boolean>;
  touch(id: string, at: number): Promise<void>;
  /**
   * Sets the device's Web Push subscription (undefined removes it), in one
   * atomic step with the check that the device is paired: false, and
   * nothing written, when it is not (revoked meanwhile).
   */
  setPush(id: string, subscription: string | undefined): Promise<boolean>;
  /** Removes the device's subscription if it is still `subscription` (its push service said it is gone); a newer one stays. */
  dropPush(id: string, subscription: string): Promise<void>;
  /** The subscriptions of every paired device that has one. */
  pushes(): Promise<StoredPush[]>;
}

/** Values the server makes once and every node must share (the key that signs Web Push messages). */
export interface SettingStore {
  get(key: string): Promise<string | undefined>;
  /** Stores `value` unless `key` has one already, in one atomic step; resolves with the value stored after the call, the same on every node. */
  putIfAbsent(key: string, value: string): Promise<string>;
}

/** A running sidecar, as the others see it. */
export interface NodeInfo {
  id: string;
  /** Where the other nodes reach its /acp. */
  url: string;
  startedAt: number;
}

/** What the nodes tell each other. */
export type StoreEvent =
  | { kind: "devices-changed" }
  | { kind: "device-revoked"; deviceId: string }
  | { kind: "jobs-pending" }
  /** A deferred job was cancelled (or expired): the node running it stops it. */
  | { kind: "job-removed"; id: string };

export interface NodeStore {
  /** Says `node` is alive for the next `ttlMs`. */
  heartbeat(node: NodeInfo, ttlMs: number): Promise<void>;
  /** Says `node` is gone now (a clean stop), so its sessions are taken over at once. */
  leave(nodeId: string): Promise<void>;
  /** The nodes alive now. */
  alive(): Promise<NodeInfo[]>;
  publish(event: StoreEvent): Promise<void>;
  /** Events published by any node, this one included. */
  subscribe(listener: (event: StoreEvent) => void): () => void;
}

export interface SharedStore {
  /** "sqlite" for the embedded store, "redis" for the shared one. */
  readonly kind: "sqlite" | "redis";
  /** This process's node id. */
  readonly nodeId: string;
  readonly sessions: SessionStore;
  /** The deferred jobs, each kept `ttlMs` after it was created (by `clock`). */
  jobs(options: { clock: () => number; ttlMs: number }): JobStore;
  /** The rate buckets; `clock` is for the embedded store (tests inject one). */
  rates(clock?: () => number): RateStore;
  readonly devices: DeviceStore;
  readonly settings: SettingStore;
  readonly nodes: NodeStore;
  /** False while the store cannot be reached: requests that need it answer 503. */
  available(): boolean;
  /** Called when `available()` changes. */
  onAvailability(listener: (available: boolean) => void): () => void;
  close(): Promise<void>;
}

/** The store cannot be reached now; the request may be retried after `retryAfterSeconds`. */
export class StoreUnavailableError extends Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = "StoreUnavailableError";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
