// One remote session as the hub keeps it. Its public id (what clients see) is
// stable for its whole life; the agent-side id can change when the agent
// process restarts or the sidecar restarts and the session is re-created there.
import type { SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import { SessionActivity } from "../../protocol/acp.ts";
import type { SessionInfo } from "../../protocol/control.ts";
import { OpenTurn } from "./interrupted-turns.ts";
import type { SessionRecord } from "./journal.ts";
import type { OneShotPermissionPolicy } from "./types.ts";

/**
 * The client connection a session is attached to, as the hub's session side
 * sees it: what the session's agent traffic needs to reach its client.
 */
export interface SessionOwner {
  readonly connectionId: string;
  /** The paired device whose token the connection uses, if any (who answered a permission request is told by its name). */
  readonly deviceId?: string | undefined;
  /** Asked in initialize to be told the session's state (`_meta.acpRemote.stateUpdates`). */
  readonly stateUpdates: boolean;
  /** Another connection loaded the session, or it ended: it is no longer attached here. */
  forget(sessionId: string): void;
  /** Does the client show the session on a page a person can see now (`_acp-remote/visibility`)? Absent: it never says. */
  shows?(sessionId: string): boolean;
  /** A notification to the client, on `sessionId`'s stream when given. */
  sendNotification(method: string, params: unknown, sessionId?: string): void;
  /** A request of ours to the client; false when the connection is gone. */
  sendRequest(id: string, method: string, params: unknown, sessionId?: string): boolean;
  /** An agent's request forwarded to the client; settles with the client's answer. */
  forwardRequest(method: string, params: unknown, sessionId: string, signal: AbortSignal): Promise<unknown>;
}

export class HubSession {
  readonly record: SessionRecord;
  /** Id of the session inside the agent process, for `agentGeneration`. */
  agentSessionId: string | undefined;
  /** Agent process generation `agentSessionId` belongs to; -1 when there is none. */
  agentGeneration = -1;
  /** In-flight re-creation of the agent-side session, shared by concurrent callers. */
  restoring: Promise<void> | undefined;
  /** While the agent replays history of its own during a restore, its updates are not journaled again. */
  suppressUpdates = false;
  /**
   * While session/new claims the public id in the store, the agent's updates
   * of the session wait here, to be journaled under the id it gets, and its
   * requests wait for `done`.
   */
  naming: { updates: SessionUpdate[]; done: Promise<void> } | undefined;
  /**
   * The client connections following the session: the one that created or
   * loaded it, and any that joined with `session/attach`. Each gets every
   * update; each may prompt and answer permission requests.
   */
  readonly clients = new Set<SessionOwner>();
  /**
   * Those of `clients` that joined with `session/attach` (the multi-client
   * attach proposal): they also get its notices (a resolved permission).
   */
  readonly attachers = new Set<SessionOwner>();
  /** The agent's modes, from session/new or session/load and its `current_mode_update`s. */
  modes: SessionModeState | null = null;
  /** The agent's config options, from session/new or session/load and its `config_option_update`s. */
  configOptions: SessionConfigOption[] = [];
  /** Prompt turns in flight. */
  running = 0;
  /** What the running turn (or the last one) left open: closed off when its agent dies under it. */
  readonly openTurn = new OpenTurn();
  /**
   * The state its followers were last told (session-activity.ts), and
   * whether its last turn ended in an error (until the next one starts).
   */
  readonly activity: { told: SessionActivity; failed: boolean } = { told: SessionActivity.Idle, failed: false };
  /** One-shot sessions (/v1) are not stored, listed or loadable. */
  readonly ephemeral: boolean;
  /** Receives the updates of an ephemeral session. */
  onUpdate: ((update: unknown) => void) | undefined;
  /** What a permission request of an ephemeral session gets. */
  oneShotPermissions: OneShotPermissionPolicy | undefined;
  /** The deferred completion an ephemeral session runs (its /v1 request_id), named in its permission requests. */
  oneShotRequestId: string | undefined;

  constructor(record: SessionRecord, options: { ephemeral?: boolean } = {}) {
    this.record = record;
    this.ephemeral = options.ephemeral ?? false;
  }

  get id(): string {
    return this.record.id;
  }

  touch(): void {
    this.record.updatedAt = Date.now();
  }

  info(): SessionInfo {
    const info: SessionInfo = {
      sessionId: this.id,
      agent: this.record.agent,
      cwd: this.record.cwd,
      state: this.clients.size > 0 ? "live" : "detached",
      running: this.running > 0,
      owner: this.record.ownerLabel,
      createdAt: this.record.createdAt,
      updatedAt: this.record.updatedAt,
    };
    const first = this.clients.values().next().value;
    if (first) info.connectionId = first.connectionId;
    if (this.record.title !== undefined) info.title = this.record.title;
    return info;
  }
}
