// The hub: remote sessions multiplexed on one agent process per configured
// agent. This file composes its parts and is the one object the transport,
// /v1 and the control protocol see:
//   session-registry  sessions by public id, owners, the per-person cap, expiry
//   session-homes     which node runs a session: restore, take-over, hand-over
//   agent-sessions    agent processes, agent-side sessions and their restore
//   agent-requests    what agents ask (permissions, fs/terminal, the rest) routed
//   session-clients   the fan-out of a session to the clients following it
//   turns             prompt turns, whoever sends them
//   session-activity  what each session is doing (running, waiting for the person, idle), told to its followers
//   editor-sessions   sessions driven from the editor
//   one-shot          /v1's one-turn sessions
//   session-new-keys  request keys of session/new: a retry whose answer was lost gets the same session
//   client-connection one remote connection's requests
import { randomUUID } from "node:crypto";
import type { ContentBlock, SessionConfigOption, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import type {
  AgentInfo,
  NewSessionParams,
  OpenedSession,
  PermissionPolicy,
  PromptParams,
  PromptResult,
  SessionList,
  PermissionSettledEvent,
  SessionStateEvent,
  SetConfigOptionParams,
  SetModeParams,
  StatusSnapshot,
  Transcript,
  TurnEvent,
} from "../../protocol/control.ts";
import { Acp, SessionActivity } from "../../protocol/acp.ts";
import { type HistoryMark, markUpdate } from "../../protocol/history.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { listen } from "../../common/listeners.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { LocalHost } from "../bridge/local-host.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { DEFAULT_DETACHED_SESSION_TTL_MS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from "../limits.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { AgentRequests } from "./agent-requests.ts";
import { AgentSessions } from "./agent-sessions.ts";
import { ClientConnection } from "./client-connection.ts";
import { EditorSessions } from "./editor-sessions.ts";
import { Journal } from "./journal.ts";
import { runOneShot } from "./one-shot.ts";
import { PermissionBroker } from "./permissions.ts";
import { PersonFolders } from "./person-folders.ts";
import { notifyClients, sessionPermissionClient } from "./session-clients.ts";
import { SessionHomes } from "./session-homes.ts";
import { SessionNotices } from "./session-notices.ts";
import { type CreatedSession, SessionNewKeys, withoutRequestKey } from "./session-new-keys.ts";
import { SessionRegistry } from "./session-registry.ts";
import type { ListedConnection, SessionServices } from "./session-services.ts";
import { HubSession, type SessionOwner } from "./session.ts";
import { SessionActivities } from "./session-activity.ts";
import { Turns } from "./turns.ts";
import type { ClientLink, ConnectOptions, EditorLink, Hub, HubConnection, HubNotices, OneShotOptions, OneShotResult } from "./types.ts";
import type { Log } from "../../protocol/log-line.ts";

export interface HubOptions {
  /** Configured agents, the default first (at least one). */
  agents: AgentSpec[];
  /** Sessions and journals: the embedded store, or the shared one of several nodes. */
  store: SharedStore;
  /**
   * The nodes alive now, on a shared store: a session whose home is not among
   * them is taken over here when a client asks for it. Absent: one node.
   */
  liveNodes?: () => Promise<ReadonlySet<string>>;
  /** Working folder of the server's own person's one-shot sessions, and of its session/new without a cwd. */
  defaultCwd?: string;
  /** The folders each person's sessions may use; absent: only the server's own person has any. */
  folders?: PersonFolders;
  /** The name a paired device was given, by its id: who answered a permission request is told by it. */
  deviceLabel?: (deviceId: string) => string | undefined;
  log?: Log;
  limits?: {
    maxSessionsPerPrincipal?: number;
    detachedSessionTtlMs?: number;
    permissionWaitMs?: number;
    maxJournalEntries?: number;
    maxJournalBytes?: number;
    agentRestartMinMs?: number;
    agentRestartMaxMs?: number;
    sessionNewKeyTtlMs?: number;
    sessionNewKeysPerPerson?: number;
  };
}

const SWEEP_INTERVAL_MS = 60_000;

/** The hub, with the sessions of an earlier run of this node back, detached and loadable. */
export async function createHub(options: HubOptions): Promise<AgentHub> {
  const hub = new AgentHub(options);
  try {
    await hub.restore();
  } catch (error) {
    await hub.shutdown();
    throw error;
  }
  return hub;
}

type StateChange = { modeId: string } | { configOptions: SessionConfigOption[] };

export class AgentHub implements Hub {
  readonly #registry: SessionRegistry;
  readonly #agents: AgentSessions;
  readonly #requests: AgentRequests;
  readonly #turns: Turns;
  readonly #editorSessions: EditorSessions;
  readonly #connections = new Set<ListedConnection>();
  readonly #journal: Journal;
  readonly #permissions: PermissionBroker;
  /** What each session is doing, told to the followers that asked. */
  readonly #activities: SessionActivities;
  /** What a person's notification channels hear (sidecar/notify/). */
  readonly #notices: SessionNotices;
  readonly #localHost = new LocalHost();
  readonly #folders: PersonFolders;
  readonly #changeListeners = new Set<() => void>();
  readonly #updateListeners = new Set<(n: SessionNotification) => void>();
  readonly #stateListeners = new Set<(event: SessionStateEvent) => void>();
  readonly #permissionListeners = new Set<(event: PermissionSettledEvent) => void>();
  readonly #log: Log;
  readonly #defaultCwd: string;
  readonly #sweep: NodeJS.Timeout;
  readonly #homes: SessionHomes;
  /** Request keys of session/new, so that a try whose answer was lost gets the same session again. */
  readonly #sessionNewKeys: SessionNewKeys;
  #editor: EditorLink | undefined;
  /** What client connections may ask of the hub, and nothing else. */
  readonly #services: SessionServices;
  #stopped = false;
  /** Prompt turns running now: session turns (counted by their events) and /v1's one-shot turns. */
  #turnsRunning = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(options: HubOptions) {
    this.#log = options.log ?? ((line) => void process.stderr.write(`${line}\n`));
    this.#defaultCwd = options.defaultCwd ?? process.cwd();
    this.#folders = options.folders ?? new PersonFolders();
    const limits = options.limits ?? {};
    this.#sessionNewKeys = new SessionNewKeys({
      ...(limits.sessionNewKeyTtlMs === undefined ? {} : { ttlMs: limits.sessionNewKeyTtlMs }),
      ...(limits.sessionNewKeysPerPerson === undefined ? {} : { perPerson: limits.sessionNewKeysPerPerson }),
    });
    this.#journal = new Journal(options.store.sessions, {
      log: this.#log,
      ...(limits.maxJournalEntries === undefined ? {} : { maxEntries: limits.maxJournalEntries }),
      ...(limits.maxJournalBytes === undefined ? {} : { maxBytes: limits.maxJournalBytes }),
    });
    this.#registry = new SessionRegistry(
      this.#journal,
      { store: options.store.sessions, nodeId: options.store.nodeId },
      {
        maxSessionsPerPrincipal: limits.maxSessionsPerPrincipal ?? DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
        detachedSessionTtlMs: limits.detachedSessionTtlMs ?? DEFAULT_DETACHED_SESSION_TTL_MS,
      },
      this.#log,
    );
    this.#activities = new SessionActivities({
      session: (sessionId) => this.#registry.get(sessionId),
      waiting: (sessionId) => this.#permissions.waiting(sessionId),
    });
    this.#permissions = new PermissionBroker({
      onChange: (sessionId) => {
        this.#activities.permissionsChanged(sessionId);
        this.#changed();
      },
      // These run only once an agent asks, when #notices exists.
      onOpened: (info) => this.#notices.permissionOpened(info),
      onSettled: (info, settlement) => {
        this.#notices.permissionSettled(info);
        const event: PermissionSettledEvent = { permissionId: info.permissionId, sessionId: info.sessionId, outcome: settlement.outcome, settledBy: settlement.by };
        if (settlement.device !== undefined) event.device = settlement.device;
        for (const listener of this.#permissionListeners) listener(event);
      },
      ...(options.deviceLabel === undefined ? {} : { deviceLabel: options.deviceLabel }),
      ...(limits.permissionWaitMs === undefined ? {} : { waitMs: limits.permissionWaitMs }),
    });
    this.#agents = new AgentSessions({
      agents: options.agents,
      registry: this.#registry,
      defaultCwd: this.#defaultCwd,
      log: this.#log,
      // These run only once the processes start (below), when #requests exists.
      handlers: (agent) => ({
        request: (method, params, signal) => this.#requests.request(agent, method, params, signal),
        notification: (method, params) => this.#requests.notification(agent, method, params),
      }),
      changed: () => this.#changed(),
      record: (session, update) => this.#record(session, update),
      // The editor's views of the session learn the modes and config options the agent offers again.
      restored: (session) => this.#emitState(session),
      restart: { minMs: limits.agentRestartMinMs, maxMs: limits.agentRestartMaxMs },
    });
    this.#notices = new SessionNotices({ session: (sessionId) => this.#registry.get(sessionId), permissions: this.#permissions, agents: this.#agents });
    this.#updateListeners.add((notification) => this.#notices.update(notification));
    this.#requests = new AgentRequests({
      agents: this.#agents,
      permissions: this.#permissions,
      localHost: this.#localHost,
      hostRoots: (session) => this.#folders.hostRoots(session.record),
      editor: () => this.#editor,
      record: (session, update) => this.#record(session, update),
      mark: (session, mark) => this.#mark(session, mark),
      log: this.#log,
    });
    this.#turns = new Turns({
      agents: this.#agents,
      record: (session, update) => this.#record(session, update),
      mark: (session, mark) => this.#mark(session, mark),
      // On a shared store a client may load the session from another node as
      // soon as it sees the turn end: the answer waits for the journal there.
      // One process serves every load of the embedded store from the same
      // journal, so it does not wait (the write would cost the turn's latency).
      written: () => (options.liveNodes === undefined ? Promise.resolve() : this.#journal.flush()),
      changed: () => this.#changed(),
    });
    this.#turns.onTurn((event) => this.#countTurn(event.state === "started" ? 1 : -1));
    this.#turns.onTurn((event) => this.#activities.turn(event));
    this.#turns.onTurn((event) => this.#notices.turn(event));
    this.#editorSessions = new EditorSessions({
      registry: this.#registry,
      agents: this.#agents,
      journal: this.#journal,
      turns: this.#turns,
      status: () => this.status(),
      stateChanged: (session, change, origin) => this.#stateChanged(session, change, origin),
    });
    this.#services = {
      session: (sessionId) => this.#registry.get(sessionId),
      adopt: (sessionId) => this.#homes.adopt(sessionId),
      newSession: (agent, owner, params, signal, requestKey) => {
        const create = async (): Promise<CreatedSession> => {
          const confined = await this.#folders.confineNewSession(owner.id, withoutRequestKey(params));
          const created = await this.#agents.create(agent, owner, confined, signal);
          this.#changed();
          return created;
        };
        if (requestKey === undefined) return create().then((created) => ({ ...created, again: false }));
        return this.#sessionNewKeys.once(owner.id, agent.spec.name, requestKey, (session) => this.#registry.get(session.id) === session, create);
      },
      // Following a session (load, resume, attach) re-creates its agent side with its stored folders: they must still be its person's.
      ensureAgentSession: (session) => this.#folders.checkSession(session.record).then(() => this.#agents.ensure(session)),
      attach: (session, owner, mode) => this.#attach(session, owner, mode),
      detachSession: (session, owner) => this.#detach(session, owner),
      history: (session) => this.#journal.entries(session.id),
      prompt: (session, params, origin, signal) => this.#turns.run(session, params, origin, signal),
      stateChanged: (session, change, origin) => this.#stateChanged(session, change, origin),
      cancel: (session) => this.#cancel(session),
      endSession: (session) => this.#endSession(session),
      // A session another node runs is listed idle: its state is known there.
      sessionsOwnedBy: async (principal) =>
        (await this.#homes.owned(principal)).map((owned) => {
          const session = this.#registry.get(owned.record.id);
          return { ...owned, state: session ? this.#activities.listed(session) : SessionActivity.Idle };
        }),
      tellState: (session, client) => this.#activities.snapshot(session, client),
      devicePush: () => this.#notices.push,
      visibilityChanged: (session) => this.#notices.visibilityChanged(session),
      answerPermission: (id, result, error, connectionId) => this.#permissions.answerFromClient(id, result, error, connectionId),
      // Random, as every id a client sees: nobody learns another connection's ids from their own.
      nextClientRequestId: () => `acp-remote-${randomUUID()}`,
      connectionClosed: (connection) => {
        this.#connections.delete(connection);
        this.#changed();
      },
      changed: () => this.#changed(),
    };

    this.#homes = new SessionHomes({
      store: options.store,
      registry: this.#registry,
      journal: this.#journal,
      agents: this.#agents,
      log: this.#log,
      changed: () => this.#changed(),
      ...(options.liveNodes ? { liveNodes: options.liveNodes } : {}),
    });
    this.#agents.start();
    this.#sweep = setInterval(() => {
      this.#sessionNewKeys.sweep();
      for (const session of this.#registry.expired()) {
        // One session that fails to end is logged; the others still end, and nothing throws out of the timer.
        try {
          this.#endSession(session);
        } catch (error) {
          this.#log(`hub: session ${session.id} did not end cleanly: ${error instanceof Error ? error.message : String(error)}`, "warn");
        }
      }
    }, SWEEP_INTERVAL_MS);
    this.#sweep.unref();
  }

  /** What a person's notification channels need of the hub. */
  get notices(): HubNotices {
    return this.#notices;
  }

  /** Sessions of an earlier run of this node come back detached and loadable. */
  restore(): Promise<void> {
    return this.#homes.restore();
  }

  /** Lets go of every session here, for a node that stops (a drain): another node takes each over when a client asks. */
  handOver(): Promise<void> {
    return this.#homes.handOver().finally(() => this.#changed());
  }

  // ---- Hub: remote connections ----

  connect(link: ClientLink, options: ConnectOptions = {}): HubConnection {
    const connection = new ClientConnection(this.#services, this.#agents.get(options.agent), link);
    this.#connections.add(connection);
    this.#changed();
    return connection;
  }

  async shutdown(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#sweep);
    for (const connection of this.#connections) connection.detach();
    await this.#agents.stop();
    // After the agents: what they said while stopping is written too, and nothing is scheduled after.
    await this.#journal.close().catch((error: unknown) => this.#log(`acp-remote: the journal could not be written at shutdown: ${String(error)}`, "error"));
    await this.#localHost.dispose();
  }

  // ---- HubControl: the editor ----

  status(): Omit<StatusSnapshot, "server" | "devices"> {
    return {
      agents: [...this.#agents.entries()].map((a): AgentInfo => ({ ...a.process.info(), isDefault: a.spec.name === this.#agents.defaultAgent })),
      connections: [...this.#connections].map((c) => c.info()),
      sessions: [...this.#registry.all()].map((s) => s.info()),
      permissions: this.#permissions.list(),
    };
  }

  async transcript(sessionId: string): Promise<Transcript> {
    if (!this.#registry.has(sessionId)) throw unknownSession(sessionId);
    return { sessionId, updates: (await this.#journal.entries(sessionId)).map((update) => ({ sessionId, update })) };
  }

  cancelTurn(sessionId: string): void {
    this.#cancel(this.#known(sessionId));
  }

  closeSession(sessionId: string): void {
    this.#endSession(this.#known(sessionId));
  }

  newSession(params: NewSessionParams): Promise<OpenedSession> {
    return this.#editorSessions.newSession(params).then((opened) => (this.#changed(), opened));
  }

  openSession(sessionId: string): Promise<OpenedSession> {
    return this.#editorSessions.open(sessionId);
  }

  prompt(params: PromptParams): Promise<PromptResult> {
    return this.#editorSessions.prompt(params);
  }

  setMode(params: SetModeParams): Promise<null> {
    return this.#editorSessions.setMode(params);
  }

  setConfigOption(params: SetConfigOptionParams): Promise<SessionStateEvent> {
    return this.#editorSessions.setConfigOption(params);
  }

  listSessions(): SessionList {
    return this.#editorSessions.list();
  }

  setEditor(editor: EditorLink | undefined): void {
    this.#editor = editor;
    this.#permissions.setEditor(editor);
    this.#changed();
  }

  setPermissionPolicy(policy: PermissionPolicy): void {
    this.#permissions.setPolicy(policy);
  }

  onChange(listener: () => void): () => void {
    return listen(this.#changeListeners, listener);
  }

  onSessionUpdate(listener: (notification: SessionNotification) => void): () => void {
    return listen(this.#updateListeners, listener);
  }

  onTurn(listener: (event: TurnEvent) => void): () => void {
    return this.#turns.onTurn(listener);
  }

  onSessionState(listener: (event: SessionStateEvent) => void): () => void {
    return listen(this.#stateListeners, listener);
  }

  onPermissionSettled(listener: (event: PermissionSettledEvent) => void): () => void {
    return listen(this.#permissionListeners, listener);
  }

  // ---- OneShotRunner: /v1 ----

  agentNames(): string[] {
    return this.#agents.names();
  }

  runPrompt(agentName: string, prompt: ContentBlock[], options: OneShotOptions): Promise<OneShotResult> {
    this.#countTurn(1);
    return runOneShot(
      {
        agents: this.#agents,
        permissions: this.#permissions,
        localHost: this.#localHost,
        folders: this.#folders,
        editor: () => this.#editor,
        defaultCwd: this.#defaultCwd,
      },
      agentName,
      prompt,
      options,
    ).finally(() => this.#countTurn(-1));
  }

  /** Resolves once no prompt turn runs (session turns and one-shot turns): a draining server waits for it. */
  idle(): Promise<void> {
    if (this.#turnsRunning === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #countTurn(delta: 1 | -1): void {
    this.#turnsRunning += delta;
    if (this.#turnsRunning > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // ---- Followers of a session ----

  /**
   * A client follows the session: `take` (session/new, session/load,
   * session/resume) makes it the only one, as a reconnecting client replaces
   * its lost connection; `join` (session/attach) adds it beside the others.
   */
  #attach(session: HubSession, client: SessionOwner, mode: "take" | "join"): void {
    if (mode === "take") {
      for (const other of session.clients) if (other !== client) other.forget(session.id);
      session.clients.clear();
      session.attachers.clear();
    } else {
      session.attachers.add(client);
    }
    session.clients.add(client);
    this.#permissions.clientAttached(session.id, sessionPermissionClient(session), client.connectionId);
    this.#changed();
  }

  /** A client stopped following (it dropped, or session/detach): the session keeps running and journaling. */
  #detach(session: HubSession, client: SessionOwner): void {
    session.clients.delete(client);
    session.attachers.delete(client);
    if (session.clients.size === 0) this.#permissions.clientGone(session.id);
    session.touch();
    this.#registry.save(session);
    this.#changed();
  }

  #cancel(session: HubSession): void {
    this.#permissions.cancelSession(session.id);
    this.#agents.cancel(session);
  }

  /** Ends a session for good (DELETE of its connection, session/close, session/delete, the editor, idle expiry). */
  #endSession(session: HubSession): void {
    if (!this.#registry.remove(session)) return;
    if (session.running > 0) this.#cancel(session);
    this.#permissions.cancelSession(session.id);
    for (const client of session.clients) client.forget(session.id);
    session.clients.clear();
    session.attachers.clear();
    this.#agents.release(session);
    this.#localHost.releaseSession(session.id);
    this.#changed();
  }

  /** Journals an update, keeps the session's title, mode and config options, and tells the editor. */
  #record(session: HubSession, update: SessionUpdate): void {
    this.#journal.append(session.id, update);
    session.openTurn.note(update);
    switch (update.sessionUpdate) {
      case "session_info_update":
        // The agent's title, or the one of the first prompt when it clears its own (session-titles.ts).
        if (typeof update.title === "string" || update.title === null) {
          const title = update.title ?? session.record.promptTitle;
          if (title === undefined) delete session.record.title;
          else session.record.title = title;
          this.#registry.save(session);
          this.#changed();
        }
        break;
      case "current_mode_update":
        if (session.modes) session.modes = { ...session.modes, currentModeId: update.currentModeId };
        this.#emitState(session);
        break;
      case "config_option_update":
        session.configOptions = update.configOptions;
        this.#emitState(session);
        break;
    }
    if (this.#updateListeners.size > 0) {
      const notification: SessionNotification = { sessionId: session.id, update };
      for (const listener of this.#updateListeners) listener(notification);
    }
  }

  /**
   * Journals a mark of the session's history (a turn's end, a settled
   * permission request) for replays; live clients learnt it from the prompt's
   * answer or the request itself, and the editor from its own events, so it
   * goes to none of them. A session that ended or left this node keeps no
   * journal here: its mark is dropped.
   */
  #mark(session: HubSession, mark: HistoryMark): void {
    if (session.ephemeral || this.#registry.get(session.id) !== session) return;
    this.#journal.append(session.id, markUpdate(mark));
  }

  /**
   * Someone set the mode or a config option (the agent answered, but sends no
   * update of its own for a change it was asked for): the other followers
   * learn it as the ACP update the agent would have sent, and it is journaled.
   */
  #stateChanged(session: HubSession, change: StateChange, origin: SessionOwner | undefined): void {
    const update: SessionUpdate = "modeId" in change
      ? { sessionUpdate: "current_mode_update", currentModeId: change.modeId }
      : { sessionUpdate: "config_option_update", configOptions: change.configOptions };
    this.#record(session, update);
    notifyClients(session, Acp.client.session.update, { sessionId: session.id, update }, origin);
  }

  #emitState(session: HubSession): void {
    const event: SessionStateEvent = { sessionId: session.id, modes: session.modes, configOptions: session.configOptions };
    for (const listener of this.#stateListeners) listener(event);
  }

  #known(sessionId: string): HubSession {
    const session = this.#registry.get(sessionId);
    if (!session || session.ephemeral) throw unknownSession(sessionId);
    return session;
  }

  #changed(): void {
    for (const listener of this.#changeListeners) listener();
  }
}

function unknownSession(sessionId: string): RpcFailure {
  return new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
}
