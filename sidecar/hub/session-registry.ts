// The hub's sessions by public id: who owns each, the per-person cap, and the
// idle expiry of sessions nobody follows. It keeps the records; what ending a
// session does to its agent, permissions and clients is the hub's business.
import { randomUUID } from "node:crypto";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import type { SessionStore } from "../store/shared-store.ts";
import type { Journal } from "./journal.ts";
import type { HubSession } from "./session.ts";
import type { Principal } from "./types.ts";
import type { Log } from "../../protocol/log-line.ts";

export interface RegistryLimits {
  maxSessionsPerPrincipal: number;
  /** A session no client follows and no turn runs in ends after this long without use, in ms. */
  detachedSessionTtlMs: number;
}

export class SessionRegistry {
  readonly #sessions = new Map<string, HubSession>();
  /**
   * session/new calls in flight per principal: counted with the principal's
   * sessions, so that concurrent calls cannot all pass the cap while each
   * awaits the agent.
   */
  readonly #reserved = new Map<string, number>();
  readonly #journal: Journal;
  readonly #homes: { store: SessionStore; nodeId: string };
  readonly #limits: RegistryLimits;
  readonly #log: Log;

  constructor(journal: Journal, homes: { store: SessionStore; nodeId: string }, limits: RegistryLimits, log: Log) {
    this.#journal = journal;
    this.#homes = homes;
    this.#limits = limits;
    this.#log = log;
  }

  get(sessionId: string): HubSession | undefined {
    return this.#sessions.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  all(): IterableIterator<HubSession> {
    return this.#sessions.values();
  }

  /**
   * A new session, under a public id no other session has on any node of the
   * store: the id its record proposes (the agent's own, so that the agent's
   * lines can be relayed as they are) when the store lets this node create it,
   * else a random one. Its record says which it got. Stored, with this node as
   * its home, and listed here when the promise settles.
   */
  async add(session: HubSession): Promise<void> {
    if (session.ephemeral) {
      this.#sessions.set(session.id, session);
      return;
    }
    const store = this.#homes.store;
    // Agents number their sessions alike (every process, on every node): the store decides who has an id.
    if (this.#sessions.has(session.id) || !(await store.create(session.record))) {
      session.record.id = randomUUID();
      if (!(await store.create(session.record))) throw new RpcFailure(ErrorCode.InternalError, "no free session id: try again");
    }
    this.#sessions.set(session.id, session);
    await store.claimHome(session.id, this.#homes.nodeId, undefined);
  }

  /** A session the store already has (of an earlier run, or taken over from another node): here, not written again. */
  restore(session: HubSession): void {
    this.#sessions.set(session.id, session);
  }

  /** Forgets the session and its journal; false when it was not (or no longer) here. */
  remove(session: HubSession): boolean {
    if (this.#sessions.get(session.id) !== session) return false;
    this.#sessions.delete(session.id);
    this.#journal.deleteSession(session.id).catch((error: unknown) => this.#failed("delete", session, error));
    return true;
  }

  /** Lets go of the session here only (another node takes it over): the store keeps it. */
  release(session: HubSession): boolean {
    if (this.#sessions.get(session.id) !== session) return false;
    this.#sessions.delete(session.id);
    return true;
  }

  /** Writes the session's record (its title, last use, agent-side id) through. */
  save(session: HubSession): void {
    if (!session.ephemeral && this.#sessions.get(session.id) === session) {
      this.#journal.saveSession(session.record).then(
        (written) => {
          if (!written) this.#log(`acp-remote: session ${session.id} was not written: the store holds another person's session under its id`, "warn");
        },
        (error: unknown) => this.#failed("save", session, error),
      );
    }
  }

  #failed(what: string, session: HubSession, error: unknown): void {
    this.#log(`acp-remote: could not ${what} session ${session.id} in the store: ${error instanceof Error ? error.message : String(error)}`, "error");
  }

  ownedBy(principal: Principal): HubSession[] {
    return [...this.#sessions.values()].filter((s) => s.record.ownerId === principal.id);
  }

  /**
   * Takes a place for one more session of `owner`, or throws when the owner
   * holds the most sessions allowed (followed, unfollowed and being created).
   * Checked and taken in one synchronous step: the returned function gives it back.
   */
  reserve(owner: Principal): () => void {
    const max = this.#limits.maxSessionsPerPrincipal;
    const reserved = this.#reserved.get(owner.id) ?? 0;
    let held = reserved;
    for (const s of this.#sessions.values()) if (!s.ephemeral && s.record.ownerId === owner.id) held += 1;
    if (held >= max) {
      throw new RpcFailure(
        ErrorCode.InvalidRequest,
        `at most ${max} sessions per person are kept (detached ones included): close some with session/close first`,
      );
    }
    this.#reserved.set(owner.id, reserved + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#reserved.get(owner.id) ?? 1) - 1;
      if (left > 0) this.#reserved.set(owner.id, left);
      else this.#reserved.delete(owner.id);
    };
  }

  /** Sessions nobody follows, with no turn running, unused for longer than the TTL. */
  expired(now = Date.now()): HubSession[] {
    const limit = now - this.#limits.detachedSessionTtlMs;
    return [...this.#sessions.values()].filter((s) => s.clients.size === 0 && s.running === 0 && s.record.updatedAt < limit);
  }
}
