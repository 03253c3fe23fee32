// Sessions driven from the editor (the control protocol): start one for the
// server's person, open any session in a view, prompt it, set its mode or a
// config option. The editor follows every session through the hub's update
// and turn listeners, so it attaches to none: remote clients keep theirs.
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import { Acp } from "../../protocol/acp.ts";
import type {
  NewSessionParams,
  OpenedSession,
  PromptParams,
  PromptResult,
  SessionList,
  SessionStateEvent,
  SetConfigOptionParams,
  SetModeParams,
} from "../../protocol/control.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import type { Journal } from "./journal.ts";
import type { SessionRegistry } from "./session-registry.ts";
import type { HubSession, SessionOwner } from "./session.ts";
import type { Turns } from "./turns.ts";
import { OWNER, type HubControl } from "./types.ts";

export interface EditorSessionsDeps {
  registry: SessionRegistry;
  agents: AgentSessions;
  journal: Journal;
  turns: Turns;
  status: HubControl["status"];
  /** The mode or config options changed by someone: tell the other followers, journal it, tell state listeners. */
  stateChanged: (session: HubSession, change: { modeId: string } | { configOptions: SessionConfigOption[] }, origin: SessionOwner | undefined) => void;
}

export class EditorSessions {
  readonly #deps: EditorSessionsDeps;

  constructor(deps: EditorSessionsDeps) {
    this.#deps = deps;
  }

  async newSession(params: NewSessionParams): Promise<OpenedSession> {
    const agent = this.#deps.agents.get(params.agent);
    const { session } = await this.#deps.agents.create(agent, OWNER, { cwd: params.cwd, mcpServers: [] });
    return this.open(session.id);
  }

  /**
   * The session's journal and live state. The editor is told of every update
   * as it is journaled and drops them until it has this answer, so the
   * answer holds the journal up to the moment it leaves.
   */
  async open(sessionId: string): Promise<OpenedSession> {
    const session = this.#session(sessionId);
    // After a restart the agent side is made again, as a remote session/load
    // does, so that the view gets the modes and config options the agent
    // offers now. An agent that runs answers at once; one that starts or
    // restarts is not waited for: its state follows when it is made
    // (acpRemote/session/state). One that cannot serve opens the session
    // without them.
    const restoring = this.#deps.agents.ensure(session).catch(() => undefined);
    if (this.#deps.agents.of(session).process.state === "running") await restoring;
    const updates = (await this.#deps.journal.entriesThrough(sessionId)).map((update) => ({ sessionId, update }));
    const opened: OpenedSession = {
      sessionId,
      agent: session.record.agent,
      cwd: session.record.cwd,
      updates,
      modes: session.modes,
      configOptions: session.configOptions,
      running: session.running > 0,
    };
    if (session.record.title !== undefined) opened.title = session.record.title;
    return opened;
  }

  async prompt(params: PromptParams): Promise<PromptResult> {
    const session = this.#session(params.sessionId);
    const response = await this.#deps.turns.run(session, { sessionId: session.id, prompt: params.prompt }, undefined);
    return { stopReason: response.stopReason };
  }

  async setMode(params: SetModeParams): Promise<null> {
    const session = this.#session(params.sessionId);
    const agentSessionId = await this.#deps.agents.ensure(session);
    await this.#deps.agents.of(session).process.request(Acp.agent.session.setMode, { sessionId: agentSessionId, modeId: params.modeId });
    this.#deps.stateChanged(session, { modeId: params.modeId }, undefined);
    return null;
  }

  async setConfigOption(params: SetConfigOptionParams): Promise<SessionStateEvent> {
    const session = this.#session(params.sessionId);
    const agentSessionId = await this.#deps.agents.ensure(session);
    const value = typeof params.value === "boolean" ? { type: "boolean", value: params.value } : { value: params.value };
    const result = await this.#deps.agents.of(session).process.request(Acp.agent.session.setConfigOption, { sessionId: agentSessionId, configId: params.configId, ...value });
    const configOptions = isRecord(result) && Array.isArray(result["configOptions"]) ? (result["configOptions"] as SessionConfigOption[]) : session.configOptions;
    this.#deps.stateChanged(session, { configOptions }, undefined);
    return { sessionId: session.id, modes: session.modes, configOptions: session.configOptions };
  }

  list(): SessionList {
    const { sessions, agents } = this.#deps.status();
    return { sessions, agents };
  }

  #session(sessionId: string): HubSession {
    const session = this.#deps.registry.get(sessionId);
    if (!session || session.ephemeral) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
    return session;
  }
}
