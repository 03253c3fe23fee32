// The hub: remote sessions multiplexed on one agent process per configured
// agent. It owns the sessions (public ids, owners, attachment), rewrites session
// ids between clients and agents (JSON-RPC ids are remapped by each agent's
// vscode-jsonrpc connection), journals every update, re-creates agent-side
// sessions after an agent or sidecar restart, routes permission requests, and
// serves the agents' host requests (`fs/*`, `terminal/*`) here or in the editor.
import { randomUUID } from "node:crypto";
import type {
  ContentBlock,
  PromptResponse,
  RequestPermissionOutcome,
  RequestPermissionRequest,
  SessionNotification,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { AgentInfo, PermissionPolicy, StatusSnapshot, Transcript } from "../../protocol/control.ts";
import { Acp } from "../../protocol/acp.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { AgentProcess } from "../bridge/agent-process.ts";
import { RpcFailure } from "../bridge/rpc-failure.ts";
import { LocalHost } from "../bridge/local-host.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { DEFAULT_DETACHED_SESSION_TTL_MS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from "../limits.ts";
import type { Database } from "../store/store.ts";
import { ClientConnection } from "./client-connection.ts";
import type { AgentEntry, ListedConnection, SessionServices } from "./session-services.ts";
import { Journal, type SessionRecord } from "./journal.ts";
import { CANCELLED, type PermissionClient, PermissionBroker } from "./permissions.ts";
import { errorMessage, withSessionId } from "./messages.ts";
import { HubSession, type SessionOwner } from "./session.ts";
import {
  type ClientLink,
  type ConnectOptions,
  type EditorLink,
  type Hub,
  type HubConnection,
  type OneShotOptions,
  type OneShotPermissionPolicy,
  type OneShotResult,
  type Principal,
  UnknownAgentError,
} from "./types.ts";

export interface HubOptions {
  /** Configured agents, the default first (at least one). */
  agents: AgentSpec[];
  store: Database;
  /** Working folder of one-shot sessions. */
  defaultCwd?: string;
  log?: (line: string) => void;
  limits?: {
    maxSessionsPerPrincipal?: number;
    detachedSessionTtlMs?: number;
    permissionWaitMs?: number;
    maxJournalEntries?: number;
    maxJournalBytes?: number;
    agentRestartMinMs?: number;
    agentRestartMaxMs?: number;
  };
}

/** Host requests an agent may send, served here or in the editor. */
const FS_METHODS: ReadonlySet<string> = new Set([Acp.client.fs.readTextFile, Acp.client.fs.writeTextFile]);
const TERMINAL_METHODS: ReadonlySet<string> = new Set(Object.values(Acp.client.terminal));

const SWEEP_INTERVAL_MS = 60_000;

export function createHub(options: HubOptions): AgentHub {
  return new AgentHub(options);
}

export class AgentHub implements Hub {
  readonly #agents = new Map<string, AgentEntry>();
  readonly #defaultAgent: string;
  readonly #sessions = new Map<string, HubSession>();
  readonly #connections = new Set<ListedConnection>();
  readonly #journal: Journal;
  readonly #permissions: PermissionBroker;
  readonly #localHost = new LocalHost();
  readonly #changeListeners = new Set<() => void>();
  readonly #updateListeners = new Set<(n: SessionNotification) => void>();
  readonly #log: (line: string) => void;
  readonly #defaultCwd: string;
  readonly #maxSessionsPerPrincipal: number;
  /**
   * session/new calls in flight per principal: counted with the principal's
   * sessions, so that concurrent calls cannot all pass the cap while each
   * awaits the agent.
   */
  readonly #reservedSessions = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #sweep: NodeJS.Timeout;
  #editor: EditorLink | undefined;
  #nextClientRequest = 0;
  /** What client connections may ask of the hub, and nothing else. */
  readonly #services: SessionServices = {
    session: (sessionId) => this.#session(sessionId),
    newSession: (agent, owner, params, signal) => this.#newSession(agent, owner, params, signal),
    ensureAgentSession: (session) => this.#ensureAgentSession(session),
    attach: (session, owner) => this.#attach(session, owner),
    detachSession: (session) => this.#detachSession(session),
    history: (session) => this.#history(session),
    recordPrompt: (session, prompt) => this.#recordPrompt(session, prompt),
    cancel: (session) => this.#cancel(session),
    endSession: (session) => this.#endSession(session),
    sessionsOwnedBy: (principal) => this.#sessionsOwnedBy(principal),
    answerPermission: (id, result, error) => this.#answerPermission(id, result, error),
    nextClientRequestId: () => this.#nextClientRequestId(),
    connectionClosed: (connection) => this.#connectionClosed(connection),
    changed: () => this.#changed(),
  };
  #stopped = false;

  constructor(options: HubOptions) {
    const first = options.agents[0];
    if (!first) throw new Error("the hub needs at least one agent");
    this.#defaultAgent = first.name;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#defaultCwd = options.defaultCwd ?? process.cwd();
    const limits = options.limits ?? {};
    this.#maxSessionsPerPrincipal = limits.maxSessionsPerPrincipal ?? DEFAULT_MAX_SESSIONS_PER_PRINCIPAL;
    this.#ttlMs = limits.detachedSessionTtlMs ?? DEFAULT_DETACHED_SESSION_TTL_MS;
    this.#journal = new Journal(options.store, {
      ...(limits.maxJournalEntries === undefined ? {} : { maxEntries: limits.maxJournalEntries }),
      ...(limits.maxJournalBytes === undefined ? {} : { maxBytes: limits.maxJournalBytes }),
    });
    this.#permissions = new PermissionBroker({
      onChange: () => this.#changed(),
      ...(limits.permissionWaitMs === undefined ? {} : { waitMs: limits.permissionWaitMs }),
    });

    for (const spec of options.agents) {
      if (this.#agents.has(spec.name)) throw new Error(`agent "${spec.name}" is configured twice`);
      const sessions = new Map<string, HubSession>();
      const entry: AgentEntry = {
        spec,
        sessions,
        process: new AgentProcess(
          spec,
          {
            request: (method, params, signal) => this.#agentRequest(entry, method, params, signal),
            notification: (method, params) => this.#agentNotification(entry, method, params),
          },
          {
            log: (line) => this.#log(`[agent ${spec.name}] ${line}`),
            ...(limits.agentRestartMinMs === undefined ? {} : { restartMinMs: limits.agentRestartMinMs }),
            ...(limits.agentRestartMaxMs === undefined ? {} : { restartMaxMs: limits.agentRestartMaxMs }),
          },
        ),
      };
      // A new process generation knows none of the old sessions: they are
      // re-created on their next use (lazily, in ensureAgentSession).
      entry.process.onRestart(() => {
        sessions.clear();
        this.#changed();
      });
      entry.process.onStateChange(() => this.#changed());
      this.#agents.set(spec.name, entry);
      entry.process.start().catch((error: unknown) => this.#log(`agent ${spec.name} did not start: ${errorMessage(error)}`));
    }

    // Sessions of an earlier run of the sidecar come back detached and loadable.
    for (const record of this.#journal.loadSessions()) {
      if (!this.#agents.has(record.agent)) continue;
      this.#sessions.set(record.id, new HubSession(record));
    }
    this.#sweep = setInterval(() => this.#sweepDetached(), SWEEP_INTERVAL_MS);
    this.#sweep.unref();
  }

  // ---- Hub: remote connections ----

  connect(link: ClientLink, options: ConnectOptions = {}): HubConnection {
    const name = options.agent ?? this.#defaultAgent;
    const agent = this.#agents.get(name);
    if (!agent) throw new UnknownAgentError(name);
    const connection = new ClientConnection(this.#services, agent, link);
    this.#connections.add(connection);
    this.#changed();
    return connection;
  }

  async shutdown(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#sweep);
    for (const connection of this.#connections) connection.detach();
    this.#journal.flush();
    await Promise.all([...this.#agents.values()].map((a) => a.process.stop()));
    await this.#localHost.dispose();
  }

  // ---- HubControl: the editor ----

  status(): Omit<StatusSnapshot, "server" | "devices"> {
    return {
      agents: [...this.#agents.values()].map((a): AgentInfo => ({ ...a.process.info(), isDefault: a.spec.name === this.#defaultAgent })),
      connections: [...this.#connections].map((c) => c.info()),
      sessions: [...this.#sessions.values()].map((s) => s.info()),
      permissions: this.#permissions.list(),
    };
  }

  transcript(sessionId: string): Transcript {
    if (!this.#sessions.has(sessionId)) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
    return { sessionId, updates: this.#journal.entries(sessionId).map((update) => ({ sessionId, update })) };
  }

  cancelTurn(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
    this.#cancel(session);
  }

  closeSession(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
    this.#endSession(session);
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
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  onSessionUpdate(listener: (notification: SessionNotification) => void): () => void {
    this.#updateListeners.add(listener);
    return () => this.#updateListeners.delete(listener);
  }

  // ---- OneShotRunner: /v1 ----

  agentNames(): string[] {
    return [...this.#agents.keys()];
  }

  async runPrompt(agentName: string, prompt: ContentBlock[], options: OneShotOptions): Promise<OneShotResult> {
    const agent = this.#agents.get(agentName);
    if (!agent) throw new UnknownAgentError(agentName);
    await agent.process.ready();
    const cwd = options.cwd ?? this.#defaultCwd;
    const created = (await agent.process.request(Acp.agent.session.new, { cwd, mcpServers: [] }, options.signal)) as { sessionId: string };
    const now = Date.now();
    const session = new HubSession(
      { id: created.sessionId, agent: agentName, cwd, roots: [cwd], mcpServers: [], ownerId: "deferred", ownerLabel: "deferred", createdAt: now, updatedAt: now },
      { ephemeral: true },
    );
    session.agentSessionId = created.sessionId;
    session.agentGeneration = agent.process.generation;
    session.onUpdate = (update) => options.onUpdate(update as SessionUpdate);
    session.oneShotPermissions = options.permissions ?? (this.#editor ? "editor" : "reject");
    agent.sessions.set(created.sessionId, session);
    // Cancellation is ACP's session/cancel: the turn then ends with `cancelled`.
    const onAbort = (): void => agent.process.notify(Acp.agent.session.cancel, { sessionId: created.sessionId });
    options.signal.addEventListener("abort", onAbort, { once: true });
    try {
      // Aborted while the agent started or the session was created: the listener above will not fire.
      if (options.signal.aborted) return { stopReason: "cancelled" };
      const response = (await agent.process.request(Acp.agent.session.prompt, { sessionId: created.sessionId, prompt })) as PromptResponse;
      const result: OneShotResult = { stopReason: response.stopReason };
      const usage = (response as { usage?: Record<string, unknown> }).usage;
      if (isRecord(usage)) result.usage = usage as NonNullable<OneShotResult["usage"]>;
      return result;
    } finally {
      options.signal.removeEventListener("abort", onAbort);
      this.#permissions.cancelSession(created.sessionId);
      agent.sessions.delete(created.sessionId);
      void this.#closeAgentSession(agent, created.sessionId);
      this.#localHost.releaseSession(created.sessionId);
    }
  }

  // ---- Sessions: what client connections ask of the hub (their SessionServices) ----

  /**
   * Takes a place for one more session of `owner`, or throws when the owner
   * holds the most sessions allowed (attached, detached and being created).
   * Checked and taken in one synchronous step: `release` gives it back.
   */
  #reserveSession(owner: Principal): () => void {
    const reserved = this.#reservedSessions.get(owner.id) ?? 0;
    let held = reserved;
    for (const s of this.#sessions.values()) if (!s.ephemeral && s.record.ownerId === owner.id) held += 1;
    if (held >= this.#maxSessionsPerPrincipal) {
      throw new RpcFailure(
        ErrorCode.InvalidRequest,
        `at most ${this.#maxSessionsPerPrincipal} sessions per person are kept (detached ones included): close some with session/close first`,
      );
    }
    this.#reservedSessions.set(owner.id, reserved + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#reservedSessions.get(owner.id) ?? 1) - 1;
      if (left > 0) this.#reservedSessions.set(owner.id, left);
      else this.#reservedSessions.delete(owner.id);
    };
  }

  #session(sessionId: string): HubSession | undefined {
    return this.#sessions.get(sessionId);
  }

  /** `session/new` for a client: the agent's session id becomes the public id. */
  async #newSession(agent: AgentEntry, owner: Principal, params: Record<string, unknown>, signal: AbortSignal): Promise<{ session: HubSession; result: Record<string, unknown> }> {
    const release = this.#reserveSession(owner);
    try {
      return await this.#createSession(agent, owner, params, signal);
    } finally {
      release();
    }
  }

  async #createSession(agent: AgentEntry, owner: Principal, params: Record<string, unknown>, signal: AbortSignal): Promise<{ session: HubSession; result: Record<string, unknown> }> {
    await agent.process.ready();
    const result = (await agent.process.request(Acp.agent.session.new, params, signal)) as Record<string, unknown>;
    const agentSessionId = result["sessionId"];
    if (typeof agentSessionId !== "string") throw new RpcFailure(ErrorCode.InternalError, `agent ${agent.spec.name} answered session/new without a sessionId`);
    const cwd = typeof params["cwd"] === "string" ? params["cwd"] : this.#defaultCwd;
    const extra = Array.isArray(params["additionalDirectories"]) ? params["additionalDirectories"].filter((d): d is string => typeof d === "string") : [];
    const now = Date.now();
    const record: SessionRecord = {
      id: this.#sessions.has(agentSessionId) ? randomUUID() : agentSessionId,
      agent: agent.spec.name,
      cwd,
      roots: [cwd, ...extra],
      mcpServers: Array.isArray(params["mcpServers"]) ? params["mcpServers"] : [],
      ownerId: owner.id,
      ownerLabel: owner.label,
      createdAt: now,
      updatedAt: now,
      agentSessionId,
    };
    const session = new HubSession(record);
    session.agentSessionId = agentSessionId;
    session.agentGeneration = agent.process.generation;
    agent.sessions.set(agentSessionId, session);
    this.#sessions.set(session.id, session);
    this.#journal.saveSession(record);
    this.#changed();
    return { session, result: { ...result, sessionId: session.id } };
  }

  /**
   * Makes sure the agent process knows the session, re-creating it after a
   * restart: with the agent's own `session/load` when it offers one (its replay
   * is not journaled again), else with a fresh `session/new` under the same
   * public id.
   */
  async #ensureAgentSession(session: HubSession): Promise<string> {
    const agent = this.#agentOf(session);
    await agent.process.ready();
    while (session.restoring) await session.restoring;
    if (session.agentSessionId !== undefined && session.agentGeneration === agent.process.generation) return session.agentSessionId;
    const restore = this.#restore(agent, session);
    session.restoring = restore;
    try {
      await restore;
    } finally {
      session.restoring = undefined;
    }
    const restored = session.agentSessionId;
    if (restored === undefined) throw new RpcFailure(ErrorCode.InternalError, `session ${session.id} could not be restored on agent ${agent.spec.name}`);
    return restored;
  }

  async #restore(agent: AgentEntry, session: HubSession): Promise<void> {
    const generation = agent.process.generation;
    const { cwd, mcpServers, roots } = session.record;
    const additionalDirectories = roots.slice(1);
    const previous = session.record.agentSessionId;
    const canLoad = agent.process.initializeResult?.agentCapabilities?.loadSession === true;
    if (canLoad && previous !== undefined) {
      agent.sessions.set(previous, session);
      session.suppressUpdates = true;
      try {
        await agent.process.request(Acp.agent.session.load, { sessionId: previous, cwd, mcpServers, ...(additionalDirectories.length ? { additionalDirectories } : {}) });
        session.agentSessionId = previous;
        session.agentGeneration = generation;
        return;
      } catch (error) {
        agent.sessions.delete(previous);
        this.#log(`agent ${agent.spec.name} could not load session ${session.id} (${errorMessage(error)}); starting a new one`);
      } finally {
        session.suppressUpdates = false;
      }
    }
    const created = (await agent.process.request(Acp.agent.session.new, { cwd, mcpServers, ...(additionalDirectories.length ? { additionalDirectories } : {}) })) as { sessionId: string };
    agent.sessions.set(created.sessionId, session);
    session.agentSessionId = created.sessionId;
    session.agentGeneration = generation;
    session.record.agentSessionId = created.sessionId;
    this.#journal.saveSession(session.record);
  }

  /** Attaches a session to a client connection (session/new or session/load), taking it from another one. */
  #attach(session: HubSession, connection: SessionOwner): void {
    const previous = session.attachedTo;
    if (previous && previous !== connection) previous.forget(session.id);
    session.attachedTo = connection;
    this.#permissions.clientAttached(session.id, this.#permissionClient(session, connection));
    this.#changed();
  }

  /** The client dropped: the session keeps running, journaling, and can be loaded again. */
  #detachSession(session: HubSession): void {
    session.attachedTo = undefined;
    this.#permissions.clientGone(session.id);
    session.touch();
    if (!session.ephemeral) this.#journal.saveSession(session.record);
    this.#changed();
  }

  /** The session's journal, to replay on session/load. */
  #history(session: HubSession): SessionUpdate[] {
    return this.#journal.entries(session.id);
  }

  /** Journals the user's prompt, so replays and transcripts show both sides. */
  #recordPrompt(session: HubSession, prompt: ContentBlock[]): void {
    for (const content of prompt) this.#record(session, { sessionUpdate: "user_message_chunk", content });
  }

  #cancel(session: HubSession): void {
    this.#permissions.cancelSession(session.id);
    const agent = this.#agentOf(session);
    if (session.agentSessionId !== undefined && session.agentGeneration === agent.process.generation) {
      agent.process.notify(Acp.agent.session.cancel, { sessionId: session.agentSessionId });
    }
  }

  /** Ends a session for good (DELETE of its connection, session/close, idle expiry). */
  #endSession(session: HubSession): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    if (session.running > 0) this.#cancel(session);
    this.#permissions.cancelSession(session.id);
    session.attachedTo?.forget(session.id);
    session.attachedTo = undefined;
    const agent = this.#agentOf(session);
    if (session.agentSessionId !== undefined && session.agentGeneration === agent.process.generation) {
      agent.sessions.delete(session.agentSessionId);
      void this.#closeAgentSession(agent, session.agentSessionId);
    }
    this.#localHost.releaseSession(session.id);
    this.#journal.deleteSession(session.id);
    this.#changed();
  }

  #sessionsOwnedBy(principal: Principal): HubSession[] {
    return [...this.#sessions.values()].filter((s) => s.record.ownerId === principal.id);
  }

  /** A PermissionClient that offers requests to the client attached to `session`. */
  #permissionClient(session: HubSession, connection: SessionOwner): PermissionClient {
    return {
      offer: (requestId, params) => connection.sendRequest(requestId, Acp.client.session.requestPermission, params, session.id),
      withdraw: (requestId) => connection.sendNotification(Acp.protocol.cancelRequest, { requestId }, session.id),
    };
  }

  /** A permission answer from a client, or false when `id` is not a permission request. */
  #answerPermission(id: string, result: unknown, error: unknown): boolean {
    return this.#permissions.answerFromClient(id, result, error);
  }

  #nextClientRequestId(): string {
    return `acp-remote-${++this.#nextClientRequest}`;
  }

  #connectionClosed(connection: ListedConnection): void {
    this.#connections.delete(connection);
    this.#changed();
  }

  // ---- Agent side ----

  /** A request from an agent process to its client (the hub). */
  async #agentRequest(agent: AgentEntry, method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const session = this.#sessionOf(agent, params);
    if (!session) throw new RpcFailure(ErrorCode.InvalidParams, `${method}: unknown sessionId`);
    const publicParams = withSessionId(params, session.id);

    if (method === Acp.client.session.requestPermission) {
      const request = publicParams as RequestPermissionRequest;
      if (session.ephemeral) return { outcome: await this.#oneShotPermission(agent, session, request, signal) };
      const connection = session.attachedTo;
      const client = connection ? this.#permissionClient(session, connection) : undefined;
      const { outcome, by } = await this.#permissions.ask(agent.spec.name, request, client, signal);
      this.#log(`permission for session ${session.id}: ${outcome.outcome === "selected" ? outcome.optionId : "cancelled"} (${by})`);
      return { outcome };
    }

    const editor = this.#editor;
    if (FS_METHODS.has(method) || TERMINAL_METHODS.has(method)) {
      const inEditor = editor !== undefined && (FS_METHODS.has(method) ? editor.host.fs : editor.host.terminal) && !session.ephemeral;
      if (inEditor) return editor.hostRequest(method, publicParams, signal);
      return this.#localHost.handle(method, publicParams, { sessionId: session.id, roots: session.record.roots }, signal);
    }

    // Anything else (extension methods, elicitation) goes to the client attached to the session.
    const connection = session.attachedTo;
    if (!connection) throw new RpcFailure(ErrorCode.MethodNotFound, `${method}: no client is attached to session ${session.id}`);
    return connection.forwardRequest(method, publicParams, session.id, signal);
  }

  #agentNotification(agent: AgentEntry, method: string, params: unknown): void {
    const session = this.#sessionOf(agent, params);
    if (!session) {
      this.#log(`agent ${agent.spec.name}: ${method} for an unknown session, dropped`);
      return;
    }
    if (method === Acp.client.session.update) {
      if (session.suppressUpdates) return;
      const update = (params as { update: SessionUpdate }).update;
      if (session.ephemeral) {
        session.onUpdate?.(update);
        return;
      }
      this.#record(session, update);
      session.attachedTo?.sendNotification(method, withSessionId(params, session.id), session.id);
      return;
    }
    session.attachedTo?.sendNotification(method, withSessionId(params, session.id), session.id);
  }

  #record(session: HubSession, update: SessionUpdate): void {
    this.#journal.append(session.id, update);
    if (update.sessionUpdate === "session_info_update") {
      const title = (update as { title?: unknown }).title;
      if (typeof title === "string") {
        session.record.title = title;
        this.#journal.saveSession(session.record);
        this.#changed();
      }
    }
    if (this.#updateListeners.size > 0) {
      const notification: SessionNotification = { sessionId: session.id, update };
      for (const listener of this.#updateListeners) listener(notification);
    }
  }

  async #oneShotPermission(agent: AgentEntry, session: HubSession, request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionOutcome> {
    const policy: OneShotPermissionPolicy = session.oneShotPermissions ?? "reject";
    if (policy === "editor" && this.#editor) return (await this.#permissions.ask(agent.spec.name, request, undefined, signal)).outcome;
    const kinds = policy === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
    const option = request.options.find((o) => kinds.includes(o.kind));
    return option ? { outcome: "selected", optionId: option.optionId } : CANCELLED;
  }

  #sessionOf(agent: AgentEntry, params: unknown): HubSession | undefined {
    const id = isRecord(params) ? params["sessionId"] : undefined;
    return typeof id === "string" ? agent.sessions.get(id) : undefined;
  }

  #agentOf(session: HubSession): AgentEntry {
    const agent = this.#agents.get(session.record.agent);
    if (!agent) throw new RpcFailure(ErrorCode.InternalError, `agent ${session.record.agent} is not configured`);
    return agent;
  }

  async #closeAgentSession(agent: AgentEntry, agentSessionId: string): Promise<void> {
    const capabilities = agent.process.initializeResult?.agentCapabilities as { sessionCapabilities?: { close?: unknown } } | undefined;
    if (!capabilities?.sessionCapabilities?.close || agent.process.state !== "running") return;
    try {
      await agent.process.request(Acp.agent.session.close, { sessionId: agentSessionId });
    } catch (error) {
      this.#log(`agent ${agent.spec.name}: session/close failed: ${errorMessage(error)}`);
    }
  }

  #sweepDetached(): void {
    const limit = Date.now() - this.#ttlMs;
    for (const session of [...this.#sessions.values()]) {
      if (!session.attachedTo && session.running === 0 && session.record.updatedAt < limit) this.#endSession(session);
    }
  }

  #changed(): void {
    for (const listener of this.#changeListeners) listener();
  }
}
