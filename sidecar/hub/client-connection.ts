// The hub side of one remote connection: what the client's messages do, and
// which session each answer and notification belongs to (the transport
// chooses the stream from that).
import type { ConnectionInfo } from "../../protocol/control.ts";
import { Acp, AcpExt, type AttachHistoryPolicy } from "../../protocol/acp.ts";
import { RpcFailure } from "../bridge/rpc-failure.ts";
import {
  ErrorCode,
  errorResponse,
  idKey,
  isNotification,
  isRecord,
  isResponse,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  paramsSessionId,
} from "../../protocol/jsonrpc.ts";
import type { InitializeResponse, SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentEntry, SessionServices } from "./session-services.ts";
import { clientInitializeResult, errorMessage, withSessionId } from "./messages.ts";
import type { HubSession, SessionOwner } from "./session.ts";
import type { ClientLink, HubConnection, SessionAccess } from "./types.ts";

interface ForwardedRequest {
  resolve(result: unknown): void;
  reject(error: RpcFailure): void;
}

export class ClientConnection implements HubConnection, SessionOwner {
  readonly #hub: SessionServices;
  readonly #agent: AgentEntry;
  readonly #link: ClientLink;
  /** Sessions attached here, by public id. */
  readonly #sessions = new Map<string, HubSession>();
  /** Client requests in flight, by id key, so `$/cancel_request` and close can abort them. */
  readonly #inFlight = new Map<string, AbortController>();
  /** Requests forwarded from the agent to this client, by our request id. */
  readonly #forwarded = new Map<string, ForwardedRequest>();
  readonly #connectedAt = Date.now();
  #initialized = false;
  #open = true;

  constructor(hub: SessionServices, agent: AgentEntry, link: ClientLink) {
    this.#hub = hub;
    this.#agent = agent;
    this.#link = link;
  }

  get connectionId(): string {
    return this.#link.connectionId;
  }

  info(): ConnectionInfo {
    return {
      connectionId: this.#link.connectionId,
      principal: this.#link.principal.label,
      profile: this.#link.profile,
      connectedAt: this.#connectedAt,
      sessions: [...this.#sessions.keys()],
    };
  }

  async initialize(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    try {
      await this.#agent.process.ready();
    } catch (error) {
      return errorResponse(request.id, ErrorCode.InternalError, `agent ${this.#agent.spec.name} is not available: ${errorMessage(error)}`);
    }
    this.#initialized = true;
    const init = this.#agent.process.initializeResult as InitializeResponse;
    return { jsonrpc: "2.0", id: request.id, result: clientInitializeResult(init, request) };
  }

  sessionAccess(sessionId: string): SessionAccess {
    if (this.#sessions.has(sessionId)) return "attached";
    const session = this.#hub.session(sessionId);
    if (session && !session.ephemeral && session.record.ownerId === this.#link.principal.id && session.record.agent === this.#agent.spec.name) return "loadable";
    return "unknown";
  }

  receive(message: JsonRpcMessage): void {
    if (!this.#open) return;
    if (isResponse(message)) return this.#onResponse(message);
    if (isNotification(message)) return this.#onNotification(message.method, message.params);
    const request = message as JsonRpcRequest;
    const key = idKey(request.id);
    const abort = new AbortController();
    this.#inFlight.set(key, abort);
    this.#onRequest(request, abort.signal).then(
      (result) => this.#reply(request, { jsonrpc: "2.0", id: request.id, result }),
      (error: unknown) => this.#reply(request, toErrorResponse(request.id, error)),
    ).finally(() => {
      if (this.#inFlight.get(key) === abort) this.#inFlight.delete(key);
    });
  }

  detach(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const session of this.#sessions.values()) this.#hub.detachSession(session, this);
    this.#sessions.clear();
    this.#end();
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const session of [...this.#sessions.values()]) this.#hub.endSession(session);
    this.#sessions.clear();
    for (const abort of this.#inFlight.values()) abort.abort();
    this.#end();
  }

  /** Another connection loaded the session, or it ended: it is no longer attached here. */
  forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  // ---- Messages to the client ----

  sendNotification(method: string, params: unknown, sessionId?: string): void {
    if (this.#open) this.#link.send({ jsonrpc: "2.0", method, params }, sessionId);
  }

  /** Sends a request of ours to the client; false when the connection is gone. */
  sendRequest(id: string, method: string, params: unknown, sessionId?: string): boolean {
    if (!this.#open) return false;
    this.#link.send({ jsonrpc: "2.0", id, method, params }, sessionId);
    return true;
  }

  /** Forwards an agent's request to the client and waits for its answer. */
  forwardRequest(method: string, params: unknown, sessionId: string, signal: AbortSignal): Promise<unknown> {
    const id = this.#hub.nextClientRequestId();
    return new Promise((resolve, reject) => {
      this.#forwarded.set(id, { resolve, reject });
      signal.addEventListener("abort", () => {
        if (this.#forwarded.delete(id)) {
          this.sendNotification(Acp.protocol.cancelRequest, { requestId: id }, sessionId);
          reject(new RpcFailure(ErrorCode.RequestCancelled, "request cancelled"));
        }
      }, { once: true });
      if (!this.sendRequest(id, method, params, sessionId)) {
        this.#forwarded.delete(id);
        reject(new RpcFailure(ErrorCode.InternalError, "the client is gone"));
      }
    });
  }

  // ---- Messages from the client ----

  async #onRequest(request: JsonRpcRequest, signal: AbortSignal): Promise<unknown> {
    const params = isRecord(request.params) ? request.params : {};
    switch (request.method) {
      case Acp.agent.initialize:
        throw new RpcFailure(ErrorCode.InvalidRequest, "the connection is already initialized");
      case Acp.agent.session.new:
        return this.#newSession(params, signal);
      case Acp.agent.session.load:
        return this.#loadSession(params);
      case Acp.agent.session.list:
        return this.#listSessions(params);
      case Acp.agent.session.resume:
        return this.#loadSession(params, "resume");
      case AcpExt.sessionAttach:
        return this.#attachSession(params);
      case AcpExt.sessionDetach: {
        const session = this.#attached(params);
        this.#sessions.delete(session.id);
        this.#hub.detachSession(session, this);
        return {};
      }
      case Acp.agent.session.prompt:
        return this.#hub.prompt(this.#attached(params), params, this, signal);
      case Acp.agent.session.close: {
        this.#hub.endSession(this.#attached(params));
        return {};
      }
      case Acp.agent.session.delete: {
        // Any session of this person may be deleted from the list, followed here or not.
        const sessionId = params["sessionId"];
        if (typeof sessionId === "string") await this.#hub.adopt(sessionId);
        const session = typeof sessionId === "string" && this.sessionAccess(sessionId) !== "unknown" ? this.#hub.session(sessionId) : undefined;
        if (!session) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${String(sessionId)}`);
        this.#hub.endSession(session);
        return {};
      }
      case Acp.agent.session.setMode: {
        const session = this.#attached(params);
        const agentSessionId = await this.#hub.ensureAgentSession(session);
        const result = await this.#agent.process.request(request.method, { ...params, sessionId: agentSessionId }, signal);
        if (typeof params["modeId"] === "string") this.#hub.stateChanged(session, { modeId: params["modeId"] }, this);
        return result;
      }
      case Acp.agent.session.setConfigOption: {
        const session = this.#attached(params);
        const agentSessionId = await this.#hub.ensureAgentSession(session);
        const result = await this.#agent.process.request(request.method, { ...params, sessionId: agentSessionId }, signal);
        const configOptions = isRecord(result) ? result["configOptions"] : undefined;
        if (Array.isArray(configOptions)) this.#hub.stateChanged(session, { configOptions: configOptions as SessionConfigOption[] }, this);
        return result;
      }
      default: {
        const sessionId = paramsSessionId(request);
        if (sessionId === undefined) {
          if (!this.#initialized) throw new RpcFailure(ErrorCode.InvalidRequest, "initialize first");
          return this.#agent.process.request(request.method, request.params, signal);
        }
        const session = this.#attached(params);
        const agentSessionId = await this.#hub.ensureAgentSession(session);
        return this.#agent.process.request(request.method, { ...params, sessionId: agentSessionId }, signal);
      }
    }
  }

  async #newSession(params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const { session, result } = await this.#hub.newSession(this.#agent, this.#link.principal, params, signal);
    if (!this.#open) {
      this.#hub.endSession(session);
      throw new RpcFailure(ErrorCode.InternalError, "the connection closed");
    }
    this.#sessions.set(session.id, session);
    this.#hub.attach(session, this, "take");
    return result;
  }

  /**
   * session/load (and session/resume, which replays nothing): the session
   * follows this connection from now on (taken from the connection it
   * followed, as a reconnecting client replaces its lost one); its journal is
   * replayed as session/update notifications on the session stream, then the
   * answer goes on the connection stream (design: decision 4), whatever the
   * agent supports.
   */
  async #loadSession(params: Record<string, unknown>, how: "load" | "resume" = "load"): Promise<unknown> {
    const session = await this.#followable(params);
    if (how === "load") this.#replay(session, await this.#hub.history(session));
    this.#sessions.set(session.id, session);
    this.#hub.attach(session, this, "take");
    return sessionState(session);
  }

  /**
   * session/attach (the multi-client attach proposal): follow the session
   * beside the clients that already do. `historyPolicy` says what is
   * replayed: `full` (the default) the journal, `pending_only` and `none`
   * nothing (open permission requests are offered either way).
   */
  async #attachSession(params: Record<string, unknown>): Promise<unknown> {
    const session = await this.#followable(params);
    const policy = params["historyPolicy"];
    const historyPolicy: AttachHistoryPolicy = policy === "none" || policy === "pending_only" ? policy : "full";
    if (historyPolicy === "full" && !this.#sessions.has(session.id)) this.#replay(session, await this.#hub.history(session));
    this.#sessions.set(session.id, session);
    this.#hub.attach(session, this, "join");
    return {
      ...sessionState(session),
      sessionId: session.id,
      clientId: this.connectionId,
      historyPolicy,
      connectedClients: [...session.clients].map((c) => c.connectionId),
    };
  }

  /** The session a load, resume or attach names, which this person may follow, with its agent side ready. */
  async #followable(params: Record<string, unknown>): Promise<HubSession> {
    const sessionId = params["sessionId"];
    if (typeof sessionId !== "string") throw new RpcFailure(ErrorCode.InvalidParams, "sessionId is required");
    await this.#hub.adopt(sessionId);
    const access = this.sessionAccess(sessionId);
    const session = this.#hub.session(sessionId);
    if (access === "unknown" || !session) throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown session ${sessionId}`);
    // Re-create the agent side first (after a restart), so a failure leaves nothing half-attached.
    await this.#hub.ensureAgentSession(session);
    if (!this.#open) throw new RpcFailure(ErrorCode.InternalError, "the connection closed");
    return session;
  }

  #replay(session: HubSession, updates: SessionUpdate[]): void {
    for (const update of updates) {
      this.#link.send({ jsonrpc: "2.0", method: Acp.client.session.update, params: { sessionId: session.id, update } }, session.id);
    }
  }

  async #listSessions(params: Record<string, unknown>): Promise<unknown> {
    const cwd = typeof params["cwd"] === "string" ? params["cwd"] : undefined;
    const sessions = (await this.#hub.sessionsOwnedBy(this.#link.principal))
      .filter((s) => s.record.agent === this.#agent.spec.name && (cwd === undefined || s.record.cwd === cwd))
      .sort((a, b) => b.record.updatedAt - a.record.updatedAt)
      .map((s) => ({
        sessionId: s.record.id,
        cwd: s.record.cwd,
        updatedAt: new Date(s.record.updatedAt).toISOString(),
        ...(s.record.title === undefined ? {} : { title: s.record.title }),
        _meta: { [AcpExt.metaKey]: { running: s.running } },
      }));
    return { sessions };
  }

  #onNotification(method: string, params: unknown): void {
    if (method === Acp.protocol.cancelRequest) {
      const requestId = isRecord(params) ? params["requestId"] : undefined;
      if (typeof requestId === "string" || typeof requestId === "number") this.#inFlight.get(idKey(requestId))?.abort();
      return;
    }
    const sessionId = isRecord(params) ? params["sessionId"] : undefined;
    const session = typeof sessionId === "string" ? this.#sessions.get(sessionId) : undefined;
    if (method === Acp.agent.session.cancel) {
      if (session) this.#hub.cancel(session);
      return;
    }
    if (typeof sessionId === "string") {
      if (!session) return;
      void this.#hub.ensureAgentSession(session).then(
        (agentSessionId) => this.#agent.process.notify(method, withSessionId(params, agentSessionId)),
        () => undefined,
      );
      return;
    }
    this.#agent.process.notify(method, params);
  }

  #onResponse(response: JsonRpcResponse): void {
    const id = response.id;
    if (typeof id !== "string") return;
    if (this.#hub.answerPermission(id, response.result, response.error, this.connectionId)) return;
    const forwarded = this.#forwarded.get(id);
    if (!forwarded) return;
    this.#forwarded.delete(id);
    if (response.error) forwarded.reject(new RpcFailure(response.error.code, response.error.message, response.error.data));
    else forwarded.resolve(response.result);
  }

  /** The session a session-scoped request names, which must be attached here. */
  #attached(params: Record<string, unknown>): HubSession {
    const sessionId = params["sessionId"];
    const session = typeof sessionId === "string" ? this.#sessions.get(sessionId) : undefined;
    if (!session) throw new RpcFailure(ErrorCode.ResourceNotFound, `session ${String(sessionId)} is not attached to this connection`);
    return session;
  }

  #reply(request: JsonRpcRequest, response: JsonRpcResponse): void {
    if (!this.#open) return;
    this.#link.send(response, paramsSessionId(request), request.method);
  }

  #end(): void {
    for (const forwarded of this.#forwarded.values()) forwarded.reject(new RpcFailure(ErrorCode.InternalError, "the client is gone"));
    this.#forwarded.clear();
    this.#hub.connectionClosed(this);
  }
}

/** What a client following a session learns of its state: modes, config options, and whether a turn runs. */
function sessionState(session: HubSession): Record<string, unknown> {
  return {
    ...(session.modes ? { modes: session.modes } : {}),
    ...(session.configOptions.length > 0 ? { configOptions: session.configOptions } : {}),
    _meta: { [AcpExt.metaKey]: { running: session.running > 0 } },
  };
}

function toErrorResponse(id: JsonRpcId, error: unknown): JsonRpcResponse {
  if (error instanceof RpcFailure) return errorResponse(id, error.code, error.message, error.data);
  return errorResponse(id, ErrorCode.InternalError, errorMessage(error));
}
