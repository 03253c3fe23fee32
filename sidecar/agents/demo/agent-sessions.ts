// The sessions of an ACP agent written with the SDK's agent API, and the turn
// each has in progress. ACP ends a turn three ways: session/cancel names the
// session, $/cancel_request withdraws the session/prompt request itself, and
// session/close ends the session with its turn. A turn sees all three as one
// AbortSignal, and its waits end as TurnCancelled when that signal aborts.
import { RequestError } from "@agentclientprotocol/sdk";

/** A turn's wait cut short by the turn's cancellation. */
export class TurnCancelled extends Error {}

/** Resolves after `ms`, at once for 0; rejects with TurnCancelled when `signal` has aborted or aborts first. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new TurnCancelled());
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new TurnCancelled());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** What every session keeps: its turn in progress, if any. */
export interface TurnHolder {
  turn?: AbortController;
}

/** The agent's sessions by id, each with the turn it has in progress. */
export class AgentSessions<S extends TurnHolder> {
  readonly #sessions = new Map<string, S>();

  get(sessionId: string): S | undefined {
    return this.#sessions.get(sessionId);
  }

  set(sessionId: string, session: S): void {
    this.#sessions.set(sessionId, session);
  }

  /** session/cancel: ends the session's turn in progress, if any. */
  cancel(sessionId: string): void {
    this.#sessions.get(sessionId)?.turn?.abort();
  }

  /** session/close: ends the session's turn and forgets the session. */
  close(sessionId: string): void {
    this.cancel(sessionId);
    this.#sessions.delete(sessionId);
  }

  /**
   * session/prompt: runs `work` as the session's turn, with a signal that
   * aborts on either the request's own cancellation (`requestSignal`) or
   * cancel/close of the session. An unknown session answers resourceNotFound.
   */
  async prompt<T>(sessionId: string, requestSignal: AbortSignal, work: (session: S, signal: AbortSignal) => Promise<T>): Promise<T> {
    const session = this.#sessions.get(sessionId);
    if (!session) throw RequestError.resourceNotFound(sessionId);
    const turn = new AbortController();
    session.turn = turn;
    try {
      return await work(session, AbortSignal.any([requestSignal, turn.signal]));
    } finally {
      if (session.turn === turn) delete session.turn;
    }
  }
}
