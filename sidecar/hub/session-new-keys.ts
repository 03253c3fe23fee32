// Request keys of session/new (`_meta.acpRemote.requestKey`). A client whose
// answer to session/new was lost with the link cannot tell whether the
// session exists; it asks again with the same key, and gets the session the
// first try created instead of a second one that orphans the first. Keys are
// kept per person (another person's key is another key, so no session leaks),
// in this node's memory: a client that reconnects comes back to the node that
// holds its connection (the affinity cookie, docs/deployment.md).
import { AcpExt } from "../../protocol/acp.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { DEFAULT_SESSION_NEW_KEY_MAX_CHARS, DEFAULT_SESSION_NEW_KEY_TTL_MS, DEFAULT_SESSION_NEW_KEYS_PER_PERSON } from "../limits.ts";
import type { HubSession } from "./session.ts";

/** What session/new made: the session, and the answer its client gets. */
export interface CreatedSession {
  session: HubSession;
  result: Record<string, unknown>;
}

/**
 * The request key a session/new carries, or undefined for none. A key that
 * is not a string of 1 to DEFAULT_SESSION_NEW_KEY_MAX_CHARS characters
 * throws RpcFailure(InvalidParams).
 */
export function requestKeyOf(params: Record<string, unknown>): string | undefined {
  const meta = params["_meta"];
  const ours = isRecord(meta) ? meta[AcpExt.metaKey] : undefined;
  const key = isRecord(ours) ? ours[AcpExt.requestKey] : undefined;
  if (key === undefined) return undefined;
  if (typeof key !== "string" || key.length === 0 || key.length > DEFAULT_SESSION_NEW_KEY_MAX_CHARS) {
    throw RpcFailure.invalidParams(`_meta.${AcpExt.metaKey}.${AcpExt.requestKey} must be a string of 1 to ${DEFAULT_SESSION_NEW_KEY_MAX_CHARS} characters`);
  }
  return key;
}

/** session/new's params as the agent gets them: the request key is the server's, not the agent's. */
export function withoutRequestKey(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params["_meta"];
  const ours = isRecord(meta) ? meta[AcpExt.metaKey] : undefined;
  if (!isRecord(meta) || !isRecord(ours) || !(AcpExt.requestKey in ours)) return params;
  const { [AcpExt.requestKey]: _key, ...otherOwn } = ours;
  const { [AcpExt.metaKey]: _own, ...otherMeta } = meta;
  const nextMeta = Object.keys(otherOwn).length > 0 ? { ...otherMeta, [AcpExt.metaKey]: otherOwn } : otherMeta;
  const { _meta: _old, ...rest } = params;
  return Object.keys(nextMeta).length > 0 ? { ...rest, _meta: nextMeta } : rest;
}

interface Entry {
  /** The try that creates the session; later tries with the key wait for it. */
  readonly created: Promise<CreatedSession>;
  /** When the key is forgotten: DEFAULT_SESSION_NEW_KEY_TTL_MS after the session was made; never while it is being made. */
  expiresAt: number;
}

export interface SessionNewKeysOptions {
  ttlMs?: number;
  perPerson?: number;
  /** The clock, in milliseconds. */
  now?: () => number;
}

export class SessionNewKeys {
  /** Per person id: per agent and key, the try that made (or makes) its session, oldest first. */
  readonly #byPerson = new Map<string, Map<string, Entry>>();
  readonly #ttlMs: number;
  readonly #perPerson: number;
  readonly #now: () => number;

  constructor(options: SessionNewKeysOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_SESSION_NEW_KEY_TTL_MS;
    this.#perPerson = Math.max(1, options.perPerson ?? DEFAULT_SESSION_NEW_KEYS_PER_PERSON);
    this.#now = options.now ?? Date.now;
  }

  /**
   * session/new of `personId` on `agent` under `key`: the session an earlier
   * try with the same person, agent and key made, while `alive` says it
   * still exists (`again: true`; a try still in flight is waited for), else
   * a new one from `create`. A try that failed leaves no key behind, so the
   * next try creates.
   */
  async once(
    personId: string,
    agent: string,
    key: string,
    alive: (session: HubSession) => boolean,
    create: () => Promise<CreatedSession>,
  ): Promise<CreatedSession & { again: boolean }> {
    const slot = JSON.stringify([agent, key]);
    for (;;) {
      const earlier = this.#live(personId)?.get(slot);
      if (earlier === undefined) break;
      const made = await earlier.created.then((c) => c, () => undefined);
      if (made !== undefined && alive(made.session)) return { ...made, again: true };
      // Failed, or its session ended since: forgotten, and this try creates (unless another began meanwhile).
      this.#forget(personId, slot, earlier);
    }
    // From here to the insertion nothing awaits: a second try that comes now finds this one.
    const created = create();
    const entry: Entry = { created, expiresAt: Number.POSITIVE_INFINITY };
    let keys = this.#byPerson.get(personId);
    if (keys === undefined) this.#byPerson.set(personId, (keys = new Map()));
    keys.set(slot, entry);
    // The oldest go first; the one just made is the newest.
    for (const oldest of keys.keys()) {
      if (keys.size <= this.#perPerson) break;
      keys.delete(oldest);
    }
    created.then(
      () => (entry.expiresAt = this.#now() + this.#ttlMs),
      () => this.#forget(personId, slot, entry),
    );
    return { ...(await created), again: false };
  }

  /** Forgets expired keys of every person (the hub's periodic sweep). */
  sweep(): void {
    for (const personId of [...this.#byPerson.keys()]) this.#live(personId);
  }

  /** Keys remembered now, all persons together (for tests of the bounds). */
  get size(): number {
    let size = 0;
    for (const keys of this.#byPerson.values()) size += keys.size;
    return size;
  }

  /** The person's keys, the expired ones forgotten first; undefined when none is left. */
  #live(personId: string): Map<string, Entry> | undefined {
    const keys = this.#byPerson.get(personId);
    if (keys === undefined) return undefined;
    const now = this.#now();
    for (const [slot, entry] of keys) if (entry.expiresAt <= now) keys.delete(slot);
    if (keys.size > 0) return keys;
    this.#byPerson.delete(personId);
    return undefined;
  }

  #forget(personId: string, slot: string, entry: Entry): void {
    const keys = this.#byPerson.get(personId);
    if (keys?.get(slot) !== entry) return;
    keys.delete(slot);
    if (keys.size === 0) this.#byPerson.delete(personId);
  }
}
