// The agent side of the hub's sessions: one process per configured agent, the
// session each public session has inside it, and the re-creation of that
// session after the agent (or the sidecar) restarted.
import type { SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import { Acp } from "../../protocol/acp.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { AgentProcess, type AgentPeerHandler } from "../bridge/agent-process.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { SessionRecord } from "./journal.ts";
import { errorMessage } from "./messages.ts";
import type { SessionRegistry } from "./session-registry.ts";
import { HubSession } from "./session.ts";
import type { AgentEntry } from "./session-services.ts";
import { UnknownAgentError, type Principal } from "./types.ts";
import type { Log } from "../../protocol/log-line.ts";

export interface AgentSessionsOptions {
  agents: AgentSpec[];
  registry: SessionRegistry;
  defaultCwd: string;
  log: Log;
  /** The hub's handlers of what each agent process sends. */
  handlers: (agent: AgentEntry) => AgentPeerHandler;
  /** A process restarted or changed state (views redraw). */
  changed: () => void;
  /** Journals an update of a stored session and tells its watchers (the updates a new session got while its id was claimed). */
  record: (session: HubSession, update: SessionUpdate) => void;
  /** The agent side of a session was made again (after a restart): its modes and config options are the agent's now. */
  restored?: (session: HubSession) => void;
  restart?: { minMs?: number; maxMs?: number };
}

export class AgentSessions {
  readonly #agents = new Map<string, AgentEntry>();
  readonly #registry: SessionRegistry;
  readonly #defaultCwd: string;
  readonly #log: Log;
  readonly #record: (session: HubSession, update: SessionUpdate) => void;
  readonly #restored: (session: HubSession) => void;
  readonly defaultAgent: string;

  constructor(options: AgentSessionsOptions) {
    const first = options.agents[0];
    if (!first) throw new Error("the hub needs at least one agent");
    this.defaultAgent = first.name;
    this.#registry = options.registry;
    this.#defaultCwd = options.defaultCwd;
    this.#log = options.log;
    this.#record = options.record;
    this.#restored = options.restored ?? (() => undefined);
    for (const spec of options.agents) {
      if (this.#agents.has(spec.name)) throw new Error(`agent "${spec.name}" is configured twice`);
      const sessions = new Map<string, HubSession>();
      const entry: AgentEntry = {
        spec,
        sessions,
        process: new AgentProcess(spec, { request: (...args) => handlers.request(...args), notification: (...args) => handlers.notification(...args) }, {
          log: (line, level) => this.#log(`[agent ${spec.name}] ${line}`, level),
          ...(options.restart?.minMs === undefined ? {} : { restartMinMs: options.restart.minMs }),
          ...(options.restart?.maxMs === undefined ? {} : { restartMaxMs: options.restart.maxMs }),
        }),
      };
      const handlers = options.handlers(entry);
      // A new process generation knows none of the old sessions: they are
      // re-created on their next use (lazily, in ensure).
      entry.process.onRestart(() => {
        sessions.clear();
        options.changed();
      });
      entry.process.onStateChange(options.changed);
      this.#agents.set(spec.name, entry);
    }
  }

  /** Starts every agent process; a failure is logged, the agent restarts by its policy. */
  start(): void {
    for (const entry of this.#agents.values()) {
      // Stopped while it started (the server stops at once): nothing went wrong.
      entry.process.start().catch((error: unknown) => this.#log(`agent ${entry.spec.name} did not start: ${errorMessage(error)}`, entry.process.state === "stopped" ? "debug" : "error"));
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((a) => a.process.stop()));
  }

  names(): string[] {
    return [...this.#agents.keys()];
  }

  entries(): IterableIterator<AgentEntry> {
    return this.#agents.values();
  }

  has(name: string): boolean {
    return this.#agents.has(name);
  }

  /** The named agent, or the default one; throws UnknownAgentError. */
  get(name: string | undefined): AgentEntry {
    const agent = this.#agents.get(name ?? this.defaultAgent);
    if (!agent) throw new UnknownAgentError(name ?? this.defaultAgent);
    return agent;
  }

  of(session: HubSession): AgentEntry {
    const agent = this.#agents.get(session.record.agent);
    if (!agent) throw new RpcFailure(ErrorCode.InternalError, `agent ${session.record.agent} is not configured`);
    return agent;
  }

  /** The session a message of `agent` names (by its agent-side id). */
  sessionOf(agent: AgentEntry, params: unknown): HubSession | undefined {
    const id = isRecord(params) ? params["sessionId"] : undefined;
    return typeof id === "string" ? agent.sessions.get(id) : undefined;
  }

  /** Is the session known to the agent's current process? */
  isLive(session: HubSession): session is HubSession & { agentSessionId: string } {
    return session.agentSessionId !== undefined && session.agentGeneration === this.of(session).process.generation;
  }

  /**
   * `session/new` on the agent for `owner`, within the owner's cap. The
   * agent's session id becomes the public id when no session of the store
   * has it yet, else the session gets a random one (SessionRegistry.add).
   */
  async create(agent: AgentEntry, owner: Principal, params: Record<string, unknown>, signal?: AbortSignal): Promise<{ session: HubSession; result: Record<string, unknown> }> {
    const release = this.#registry.reserve(owner);
    try {
      await agent.process.ready();
      const result = (await agent.process.request(Acp.agent.session.new, params, signal)) as Record<string, unknown>;
      const agentSessionId = result["sessionId"];
      if (typeof agentSessionId !== "string") throw new RpcFailure(ErrorCode.InternalError, `agent ${agent.spec.name} answered session/new without a sessionId`);
      const cwd = typeof params["cwd"] === "string" ? params["cwd"] : this.#defaultCwd;
      const extra = Array.isArray(params["additionalDirectories"]) ? params["additionalDirectories"].filter((d): d is string => typeof d === "string") : [];
      const now = Date.now();
      const record: SessionRecord = {
        id: agentSessionId,
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
      takeSessionState(session, result);
      // Known to the agent's traffic at once (an agent may send updates right
      // after its answer), held back until the public id is settled.
      let named = (): void => undefined;
      const naming = { updates: [] as SessionUpdate[], done: new Promise<void>((resolve) => (named = resolve)) };
      session.naming = naming;
      agent.sessions.set(agentSessionId, session);
      try {
        // The answer leaves once the session is stored: a client told of it can load it from any node.
        await this.#registry.add(session);
      } catch (error) {
        session.naming = undefined;
        named();
        this.#registry.remove(session);
        agent.sessions.delete(agentSessionId);
        void this.closeOnAgent(agent, agentSessionId);
        throw error;
      }
      session.naming = undefined;
      named();
      for (const update of naming.updates) this.#record(session, update);
      return { session, result: { ...result, sessionId: session.id } };
    } finally {
      release();
    }
  }

  /**
   * Makes sure the agent process knows the session, re-creating it after a
   * restart: with the agent's own `session/load` when it offers one (its replay
   * is not journaled again), else with a fresh `session/new` under the same
   * public id. Returns the agent-side session id.
   */
  /**
   * The session's id on its agent when it is there now (the process runs, the
   * session is of its generation, nothing restores it): what ensure() would
   * give, known in the caller's turn rather than a few microtasks later.
   */
  agentIdNow(session: HubSession): string | undefined {
    return this.of(session).process.state === "running" && !session.restoring && this.isLive(session) ? session.agentSessionId : undefined;
  }

  async ensure(session: HubSession): Promise<string> {
    const agent = this.of(session);
    await agent.process.ready();
    while (session.restoring) await session.restoring;
    if (this.isLive(session)) return session.agentSessionId;
    const restore = this.#restore(agent, session);
    session.restoring = restore;
    try {
      await restore;
    } finally {
      session.restoring = undefined;
    }
    const restored = session.agentSessionId;
    if (restored === undefined) throw new RpcFailure(ErrorCode.InternalError, `session ${session.id} could not be restored on agent ${agent.spec.name}`);
    this.#restored(session);
    return restored;
  }

  async #restore(agent: AgentEntry, session: HubSession): Promise<void> {
    const generation = agent.process.generation;
    const { cwd, mcpServers, roots } = session.record;
    const additionalDirectories = roots.slice(1);
    const previous = session.record.agentSessionId;
    const canLoad = agent.process.initializeResult?.agentCapabilities?.loadSession === true;
    // An id another session of this process has now (agents of other nodes
    // number their sessions alike, and this session may come from one) is
    // not this session's here: a new agent session, not a load of that one.
    const taken = previous !== undefined && agent.sessions.has(previous) && agent.sessions.get(previous) !== session;
    if (canLoad && previous !== undefined && !taken) {
      agent.sessions.set(previous, session);
      session.suppressUpdates = true;
      try {
        const loaded = await agent.process.request(Acp.agent.session.load, { sessionId: previous, cwd, mcpServers, ...(additionalDirectories.length ? { additionalDirectories } : {}) });
        session.agentSessionId = previous;
        session.agentGeneration = generation;
        takeSessionState(session, loaded);
        return;
      } catch (error) {
        agent.sessions.delete(previous);
        this.#log(`agent ${agent.spec.name} could not load session ${session.id} (${errorMessage(error)}); starting a new one`, "warn");
      } finally {
        session.suppressUpdates = false;
      }
    }
    const created = (await agent.process.request(Acp.agent.session.new, { cwd, mcpServers, ...(additionalDirectories.length ? { additionalDirectories } : {}) })) as { sessionId: string };
    agent.sessions.set(created.sessionId, session);
    session.agentSessionId = created.sessionId;
    session.agentGeneration = generation;
    session.record.agentSessionId = created.sessionId;
    takeSessionState(session, created);
    this.#registry.save(session);
  }

  /** ACP's session/cancel for the running turn, if the agent knows the session. */
  cancel(session: HubSession): void {
    if (this.isLive(session)) this.of(session).process.notify(Acp.agent.session.cancel, { sessionId: session.agentSessionId });
  }

  /** Frees the agent side of an ended session (session/close when the agent offers it). */
  release(session: HubSession): void {
    if (!this.isLive(session)) return;
    const agent = this.of(session);
    agent.sessions.delete(session.agentSessionId);
    void this.closeOnAgent(agent, session.agentSessionId);
  }

  async closeOnAgent(agent: AgentEntry, agentSessionId: string): Promise<void> {
    const capabilities = agent.process.initializeResult?.agentCapabilities as { sessionCapabilities?: { close?: unknown } } | undefined;
    if (!capabilities?.sessionCapabilities?.close || agent.process.state !== "running") return;
    try {
      await agent.process.request(Acp.agent.session.close, { sessionId: agentSessionId });
    } catch (error) {
      this.#log(`agent ${agent.spec.name}: session/close failed: ${errorMessage(error)}`, "warn");
    }
  }
}

/** Keeps the modes and config options a session/new or session/load result offers. */
function takeSessionState(session: HubSession, result: unknown): void {
  if (!isRecord(result)) return;
  if (isRecord(result["modes"])) session.modes = result["modes"] as SessionModeState;
  if (Array.isArray(result["configOptions"])) session.configOptions = result["configOptions"] as SessionConfigOption[];
}
