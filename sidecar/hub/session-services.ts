// What a client connection asks of the hub: the session side (registry,
// agent sessions, journal, permissions) it drives for one remote client. The
// hub hands each connection this interface, not itself, so the connection
// cannot reach the rest of the hub and the two files do not import each other.
import type { PromptResponse, SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ListedSessionState } from "../../protocol/acp.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { ConnectionInfo } from "../../protocol/control.ts";
import type { AgentProcess } from "../bridge/agent-process.ts";
import type { SessionRecord } from "../store/shared-store.ts";
import type { HubSession, SessionOwner } from "./session.ts";
import type { DevicePush, HubConnection, Principal } from "./types.ts";

/** One configured agent and its process. */
export interface AgentEntry {
  readonly spec: AgentSpec;
  readonly process: AgentProcess;
  /** Sessions by their id inside the current agent process generation. */
  readonly sessions: Map<string, HubSession>;
}

/** A client connection as the hub keeps it: for views, and to detach at shutdown. */
export interface ListedConnection extends HubConnection {
  info(): ConnectionInfo;
}

export interface SessionServices {
  session(sessionId: string): HubSession | undefined;
  /** The session, taken over from the shared store when its node is gone; undefined when the store does not know it. */
  adopt(sessionId: string): Promise<HubSession | undefined>;
  /**
   * `session/new` for a client, within the owner's session cap: the agent's
   * session id becomes the public id unless a stored session has it. With a
   * request key, the session an earlier try of the same owner made under it,
   * while it lives (`again`), instead of a new one (SessionNewKeys).
   */
  newSession(
    agent: AgentEntry,
    owner: Principal,
    params: Record<string, unknown>,
    signal: AbortSignal,
    requestKey?: string,
  ): Promise<{ session: HubSession; result: Record<string, unknown>; again: boolean }>;
  /** The session's id in the agent's current process, re-creating it there after a restart. */
  ensureAgentSession(session: HubSession): Promise<string>;
  /**
   * The client follows the session: `take` (session/new, load, resume) makes
   * it the only follower; `join` (session/attach) adds it beside the others.
   */
  attach(session: HubSession, owner: SessionOwner, mode: "take" | "join"): void;
  /** The client stopped following (dropped, or session/detach): the session keeps running, journaling, and can be loaded again. */
  detachSession(session: HubSession, owner: SessionOwner): void;
  /** The session's journal as it stands at this call (nothing appended later), to replay on session/load and session/attach. */
  history(session: HubSession): Promise<SessionUpdate[]>;
  /** A prompt turn (`params` as the client sent them): journaled, shown to the other followers, counted as running. */
  prompt(session: HubSession, params: Record<string, unknown>, origin: SessionOwner, signal: AbortSignal): Promise<PromptResponse>;
  /** The client set the mode or a config option: the other followers and the editor learn it. */
  stateChanged(session: HubSession, change: { modeId: string } | { configOptions: SessionConfigOption[] }, origin: SessionOwner): void;
  cancel(session: HubSession): void;
  /** Ends a session for good. */
  endSession(session: HubSession): void;
  /** The person's sessions, here and (on a shared store) on the other nodes, with what each is doing. */
  sessionsOwnedBy(principal: Principal): Promise<Array<{ record: SessionRecord; running: boolean; state: ListedSessionState }>>;
  /** Tells the client the session's state now, if it asked for state updates (after load, resume, attach). */
  tellState(session: HubSession, owner: SessionOwner): void;
  /** The Web Push subscriptions of paired devices, while the server sends Web Push. */
  devicePush(): DevicePush | undefined;
  /** A client said whether it shows the session, or stopped following it. */
  visibilityChanged(session: HubSession): void;
  /** A permission answer from client connection `connectionId`; false when `id` is no permission request offered to that connection. */
  answerPermission(id: string, result: unknown, error: unknown, connectionId: string): boolean;
  nextClientRequestId(): string;
  connectionClosed(connection: ListedConnection): void;
  /** Something views show changed (a turn started or ended). */
  changed(): void;
}
