// What a client connection asks of the hub: the session side (registry,
// agent sessions, journal, permissions) it drives for one remote client. The
// hub hands each connection this interface, not itself, so the connection
// cannot reach the rest of the hub and the two files do not import each other.
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { ConnectionInfo } from "../../protocol/control.ts";
import type { AgentProcess } from "../bridge/agent-process.ts";
import type { HubSession, SessionOwner } from "./session.ts";
import type { HubConnection, Principal } from "./types.ts";

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
  /** `session/new` for a client, within the owner's session cap: the agent's session id becomes the public id. */
  newSession(agent: AgentEntry, owner: Principal, params: Record<string, unknown>, signal: AbortSignal): Promise<{ session: HubSession; result: Record<string, unknown> }>;
  /** The session's id in the agent's current process, re-creating it there after a restart. */
  ensureAgentSession(session: HubSession): Promise<string>;
  /** Attaches a session to a client connection (session/new or session/load), taking it from another one. */
  attach(session: HubSession, owner: SessionOwner): void;
  /** The client dropped: the session keeps running, journaling, and can be loaded again. */
  detachSession(session: HubSession): void;
  /** The session's journal, to replay on session/load. */
  history(session: HubSession): SessionUpdate[];
  /** Journals the user's prompt, so replays and transcripts show both sides. */
  recordPrompt(session: HubSession, prompt: ContentBlock[]): void;
  cancel(session: HubSession): void;
  /** Ends a session for good. */
  endSession(session: HubSession): void;
  sessionsOwnedBy(principal: Principal): HubSession[];
  /** A permission answer from a client, or false when `id` is not a permission request. */
  answerPermission(id: string, result: unknown, error: unknown): boolean;
  nextClientRequestId(): string;
  connectionClosed(connection: ListedConnection): void;
  /** Something views show changed (a turn started or ended). */
  changed(): void;
}
