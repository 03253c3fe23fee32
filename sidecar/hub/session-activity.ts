// What a session is doing, as a person needs it at a glance: a turn runs, a
// turn waits for them (a permission request is open), or nothing runs. The
// followers that asked for it in initialize (`_meta.acpRemote.stateUpdates`)
// are told each change as the ACP v2 draft's `state_update` session update,
// the idle that ends a turn with the turn's stop reason, so that a client
// learns a turn ended without polling session/list, whoever sent the prompt.
// session/list shows the same state. The multi-client proposals reuse this
// update for turn completion rather than adding a notice of their own.
import { Acp, AcpExt, ListedSessionState, SessionActivity } from "../../protocol/acp.ts";
import type { TurnEvent } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import type { HubSession, SessionOwner } from "./session.ts";

export interface SessionActivitiesDeps {
  /** The stored session of that public id on this node, if any. */
  session(sessionId: string): HubSession | undefined;
  /** How many permission requests of the session are open now. */
  waiting(sessionId: string): number;
}

/** How a turn ended, as the idle `state_update` carries it. */
type TurnEnd = Pick<TurnEvent, "stopReason" | "message">;

export class SessionActivities {
  readonly #deps: SessionActivitiesDeps;

  constructor(deps: SessionActivitiesDeps) {
    this.#deps = deps;
  }

  /** The session's state now: an open permission request outweighs a running turn. */
  of(session: HubSession): SessionActivity {
    if (this.#deps.waiting(session.id) > 0) return SessionActivity.RequiresAction;
    return session.running > 0 ? SessionActivity.Running : SessionActivity.Idle;
  }

  /** The state session/list shows: an idle session whose last turn failed says so. */
  listed(session: HubSession): ListedSessionState {
    const state = this.of(session);
    return state === SessionActivity.Idle && session.activity.failed ? ListedSessionState.Failed : state;
  }

  /** A turn of a stored session started or ended (Turns' events). */
  turn(event: TurnEvent): void {
    const session = this.#stored(event.sessionId);
    if (!session) return;
    if (event.state === "started") {
      session.activity.failed = false;
      this.#tell(session);
      return;
    }
    if (session.running === 0) session.activity.failed = event.stopReason === "error";
    this.#tell(session, event);
  }

  /** A permission request of the session opened or was settled. */
  permissionsChanged(sessionId: string): void {
    const session = this.#stored(sessionId);
    if (session) this.#tell(session);
  }

  /**
   * Tells `client` the session's state as it is now, if it asked: after
   * session/load, session/resume or session/attach, once their replay is out,
   * as the v2 draft's resume does. A snapshot carries no stop reason: it is
   * no turn's end.
   */
  snapshot(session: HubSession, client: SessionOwner): void {
    if (client.stateUpdates) client.sendNotification(Acp.client.session.update, { sessionId: session.id, update: stateUpdate(this.of(session)) }, session.id);
  }

  #stored(sessionId: string): HubSession | undefined {
    const session = this.#deps.session(sessionId);
    return session && !session.ephemeral ? session : undefined;
  }

  /** Tells the followers that asked, when the state changed; the idle that ends a turn carries `end`. */
  #tell(session: HubSession, end?: TurnEnd): void {
    const state = this.of(session);
    if (state === session.activity.told) return;
    session.activity.told = state;
    const update = stateUpdate(state, state === SessionActivity.Idle ? end : undefined);
    for (const client of session.clients) {
      if (client.stateUpdates) client.sendNotification(Acp.client.session.update, { sessionId: session.id, update }, session.id);
    }
  }
}

/**
 * The draft's update: `{ sessionUpdate: "state_update", state }`, an idle
 * that ends a turn with its `stopReason`, a failed turn as the draft's
 * `error` stop reason with the failure as a JSON-RPC error object.
 */
export function stateUpdate(state: SessionActivity, end?: TurnEnd): Record<string, unknown> {
  const update: Record<string, unknown> = { sessionUpdate: AcpExt.stateUpdate, state };
  if (end?.stopReason === undefined) return update;
  update["stopReason"] = end.stopReason;
  if (end.stopReason === "error") update["error"] = { code: ErrorCode.InternalError, message: end.message ?? "the turn failed" };
  return update;
}
