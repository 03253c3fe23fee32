// Which node runs each session. On the embedded store this node runs them
// all. On a shared store a session has a home node, where its agent runs: a
// session whose home is gone (killed, or drained) is taken over by the node a
// client asks, which claims it in one atomic step against the others and
// re-creates its agent session as after a restart; its journal is in the
// store, so session/load replays it as on one node. A session that comes back
// so had no turn running here: a turn its journal shows open was cut off when
// the server that ran it stopped, and is closed off before any client reads
// it (interrupted-turns.ts).
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { SessionRecord, SharedStore } from "../store/shared-store.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import { closeInterruptedTurn } from "./interrupted-turns.ts";
import type { Journal } from "./journal.ts";
import { HubSession } from "./session.ts";
import type { SessionRegistry } from "./session-registry.ts";
import type { Principal } from "./types.ts";

/** A live node other than this one runs the session: the request goes there. */
class SessionElsewhereError extends RpcFailure {
  readonly sessionId: string;
  readonly node: string;
  constructor(sessionId: string, node: string) {
    super(ErrorCode.InternalError, `session ${sessionId} runs on node ${node}`);
    this.sessionId = sessionId;
    this.node = node;
  }
}

export interface SessionHomesDeps {
  store: SharedStore;
  registry: SessionRegistry;
  journal: Journal;
  agents: AgentSessions;
  /** The nodes alive now; absent on the embedded store. */
  liveNodes?: () => Promise<ReadonlySet<string>>;
  log: (line: string) => void;
  changed: () => void;
}

export class SessionHomes {
  readonly #deps: SessionHomesDeps;
  /** Take-overs in flight, so that two clients asking at once adopt a session once. */
  readonly #adopting = new Map<string, Promise<HubSession | undefined>>();

  constructor(deps: SessionHomesDeps) {
    this.#deps = deps;
  }

  get #shared(): boolean {
    return this.#deps.liveNodes !== undefined;
  }

  /**
   * Sessions of an earlier run of this node come back detached and loadable:
   * all of the embedded store's; on a shared store, those whose home is this
   * node (the others are taken over one by one, when a client asks).
   */
  async restore(): Promise<void> {
    const { store, registry, agents } = this.#deps;
    for (const record of await this.#deps.journal.loadSessions()) {
      if (!agents.has(record.agent) || registry.has(record.id)) continue;
      if (this.#shared && (await store.sessions.home(record.id)) !== store.nodeId) continue;
      const session = new HubSession(record);
      await this.#closeInterruptedTurn(session);
      registry.restore(session);
    }
  }

  /** A turn the session's journal shows open ends as the server stopping under it; the session lists as failed. */
  async #closeInterruptedTurn(session: HubSession): Promise<void> {
    try {
      if (!(await closeInterruptedTurn(this.#deps.journal, session.id))) return;
      session.activity.failed = true;
      this.#deps.log(`acp-remote: session ${session.id}: its turn was interrupted when the server stopped`);
    } catch (error) {
      // The store could not be read: the session comes back as it is, its history read again on its next load.
      this.#deps.log(`acp-remote: session ${session.id}: could not look for a turn the server stopped in: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * The session `sessionId`, taken over from the store when it is not here.
   * Undefined when the store does not know it; SessionElsewhereError when a
   * live node runs it.
   */
  adopt(sessionId: string): Promise<HubSession | undefined> {
    const here = this.#deps.registry.get(sessionId);
    if (here || !this.#shared) return Promise.resolve(here);
    let adopting = this.#adopting.get(sessionId);
    if (adopting === undefined) {
      adopting = this.#takeOver(sessionId).finally(() => this.#adopting.delete(sessionId));
      this.#adopting.set(sessionId, adopting);
    }
    return adopting;
  }

  async #takeOver(sessionId: string): Promise<HubSession | undefined> {
    const { store, registry, agents } = this.#deps;
    const me = store.nodeId;
    const record = await store.sessions.get(sessionId);
    if (!record || !agents.has(record.agent)) return undefined;
    const home = await store.sessions.home(sessionId);
    if (home !== undefined && home !== me && (await this.#deps.liveNodes?.())?.has(home)) throw new SessionElsewhereError(sessionId, home);
    if (home !== me && !(await store.sessions.claimHome(sessionId, me, home))) {
      throw new SessionElsewhereError(sessionId, (await store.sessions.home(sessionId)) ?? "another node");
    }
    const existing = registry.get(sessionId);
    if (existing) return existing;
    const session = new HubSession(record);
    // Before the session is here: nobody reads its history until then.
    await this.#closeInterruptedTurn(session);
    const raced = registry.get(sessionId);
    if (raced) return raced;
    registry.restore(session);
    this.#deps.log(`acp-remote: session ${sessionId} taken over${home === undefined || home === me ? "" : ` from node ${home}`}`);
    this.#deps.changed();
    return session;
  }

  /** The person's sessions: those here, and on a shared store those the other nodes run or ran. */
  async owned(principal: Principal): Promise<Array<{ record: SessionRecord; running: boolean }>> {
    const here = this.#deps.registry.ownedBy(principal).map((s) => ({ record: s.record, running: s.running > 0 }));
    if (!this.#shared) return here;
    const known = new Set(here.map((s) => s.record.id));
    const elsewhere = (await this.#deps.store.sessions.all()).filter((r) => r.ownerId === principal.id && !known.has(r.id));
    return [...here, ...elsewhere.map((record) => ({ record, running: false }))];
  }

  /**
   * Lets go of every session here (a node that stops): the journal is
   * written and leaves memory, the homes are released, and the store keeps
   * the rest.
   */
  async handOver(): Promise<void> {
    const { store, registry, agents } = this.#deps;
    await this.#deps.journal.flush();
    for (const session of [...registry.all()]) {
      if (session.ephemeral || !registry.release(session)) continue;
      for (const client of session.clients) client.forget(session.id);
      session.clients.clear();
      session.attachers.clear();
      agents.release(session);
      await this.#deps.journal.release(session.id);
      await store.sessions.releaseHome(session.id, store.nodeId).catch(() => undefined);
    }
  }
}
