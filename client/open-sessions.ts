// The sessions the editor has open, read from the answers to its requests
// (`session/new` results, `session/load`, `session/resume`, `session/close`),
// with what `session/load` needs to open them again on a new connection, and
// what the editor has been shown of each (seen-updates.ts), so that the replay
// of a reload is not shown a second time.
import { Acp } from "../protocol/acp.ts";
import { isRecord, paramsSessionId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from "../protocol/jsonrpc.ts";
import { SeenUpdates, type ReplayFilter } from "./seen-updates.ts";
import { DEFAULT_CONNECT_RELOAD_RETRIES, DEFAULT_CONNECT_RELOAD_RETRY_MS } from "./limits.ts";

/**
 * qwen serve ends a session when the connection that held it is lost, and
 * answers a `session/load` that comes while it is still closing it with
 * "The session is closing; retry after close completes": that load is tried again.
 */
const RETRY_LATER = /retry after/i;

export interface OpenSession {
  cwd: string;
  mcpServers: unknown[];
  /** What the editor has been shown of it. */
  seen: SeenUpdates;
}

export class OpenSessions {
  readonly #sessions = new Map<string, OpenSession>();
  /**
   * Sessions being loaded again, with what is left to recognise of what the
   * editor has seen: their replay is filtered against it.
   */
  readonly #reloading = new Map<string, ReplayFilter>();

  get size(): number {
    return this.#sessions.size;
  }

  /** Follows the sessions the editor opens and ends, from the answers to its requests. */
  track(request: JsonRpcRequest, response: JsonRpcResponse): void {
    if (response.error !== undefined) return;
    const params = isRecord(request.params) ? request.params : {};
    const result = isRecord(response.result) ? response.result : {};
    const open = (sessionId: unknown): void => {
      if (typeof sessionId !== "string") return;
      const previous = this.#sessions.get(sessionId);
      this.#sessions.set(sessionId, {
        cwd: typeof params["cwd"] === "string" ? params["cwd"] : "",
        mcpServers: Array.isArray(params["mcpServers"]) ? params["mcpServers"] : [],
        seen: previous?.seen ?? new SeenUpdates(),
      });
    };
    switch (request.method) {
      case Acp.agent.session.new:
        open(result["sessionId"]);
        return;
      case Acp.agent.session.load:
      case Acp.agent.session.resume:
        open(params["sessionId"]);
        return;
      case Acp.agent.session.close:
      case Acp.agent.session.delete:
        if (typeof params["sessionId"] === "string") this.forget(params["sessionId"]);
        return;
    }
  }

  /**
   * A `session/update` from the server: what of it the editor is to see, or
   * undefined when it is a replayed update the editor has seen already.
   */
  update(message: JsonRpcNotification): JsonRpcNotification | undefined {
    const sessionId = paramsSessionId(message);
    if (sessionId === undefined) return message;
    const session = this.#sessions.get(sessionId);
    const filter = this.#reloading.get(sessionId);
    if (filter !== undefined) {
      const rest = filter.pass(message.params);
      if (rest === undefined) {
        if (filter.done) this.#reloading.delete(sessionId);
        return undefined;
      }
      // The first update the editor has not seen: the replay has caught up
      // with what it has, and everything after this on the (ordered) session
      // stream is new.
      this.#reloading.delete(sessionId);
      message = { ...message, params: rest };
    }
    session?.seen.remember(message.params);
    return message;
  }

  /**
   * A reload of the session is about to be sent: filter its replay. The
   * filter outlives the load's answer: that answer travels on the connection
   * stream, the replay on the session stream, and the two are not ordered with
   * each other (spec: POST /acp, "Which stream carries the response").
   */
  #filterReplay(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (session !== undefined && !session.seen.empty) this.#reloading.set(sessionId, session.seen.replay());
  }

  /**
   * Loads every open session again on a new connection (`session/load` sent
   * through `request`), filtering their replays; a session the agent no
   * longer has is forgotten. Throws when a request fails (the connection).
   */
  async reloadAll(request: (method: string, params: unknown) => Promise<JsonRpcResponse>, log: (line: string) => void): Promise<void> {
    for (const [sessionId, session] of [...this.#sessions]) {
      this.#filterReplay(sessionId);
      try {
        const load = (): Promise<JsonRpcResponse> => request(Acp.agent.session.load, { sessionId, cwd: session.cwd, mcpServers: session.mcpServers });
        let loaded = await load();
        for (let retry = 1; loaded.error !== undefined && RETRY_LATER.test(loaded.error.message) && retry <= DEFAULT_CONNECT_RELOAD_RETRIES; retry++) {
          log(`session ${sessionId}: ${loaded.error.message}; trying again`);
          // Polled: the server says when to try again only in words.
          await new Promise((resolve) => setTimeout(resolve, DEFAULT_CONNECT_RELOAD_RETRY_MS));
          this.#filterReplay(sessionId);
          loaded = await load();
        }
        if (loaded.error !== undefined) {
          log(`session ${sessionId} could not be loaded again: ${loaded.error.message}`);
          this.forget(sessionId);
        }
      } catch (error) {
        this.#reloading.delete(sessionId);
        throw error;
      }
    }
  }

  /** A connection attempt failed: the replays it started will not come. */
  stopReloading(): void {
    this.#reloading.clear();
  }

  forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
    this.#reloading.delete(sessionId);
  }

  clear(): void {
    this.#sessions.clear();
    this.#reloading.clear();
  }
}
