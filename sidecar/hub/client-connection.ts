// The hub side of one remote connection: what the client's messages do, and
// which session each answer and notification belongs to (the transport
// chooses the stream from that).
import type { ConnectionInfo } from "../../protocol/control.ts";
import { Acp, AcpExt, type AttachHistoryPolicy } from "../../protocol/acp.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { ErrorCode, errorResponse, idKey, isNotification, isRecord, isResponse, paramsSessionId } from "../../protocol/jsonrpc.ts";
import type { JsonRpcId, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import type { InitializeResponse, SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentEntry, SessionServices } from "./session-services.ts";
import { earlierTurns, latestTurns } from "./history-pages.ts";
import { clientInitializeResult, errorMessage, withSessionId } from "./messages.ts";
import { requestKeyOf } from "./session-new-keys.ts";
import type { HubSession, SessionOwner } from "./session.ts";
import type { ClientLink, DevicePush, HubConnection, SessionAccess } from "./types.ts";

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
  /**
   * Sessions whose history is being replayed here, with what was sent to them
   * meanwhile: it waits, in order, until the replay is out.
   */
  readonly #held = new Map<string, Array<{ message: JsonRpcMessage; answers?: string }>>();
  readonly #connectedAt = Date.now();
  #initialized = false;
  #open = true;
  /** The client asked in initialize to be told its sessions' state (`state_update`). */
  #stateUpdates = false;
  /** Sessions followed here that the client says it shows on a page a person can see (`_acp-remote/visibility`). */
  readonly #shown = new Set<string>();

  constructor(hub: SessionServices, agent: AgentEntry, link: ClientLink) {
    this.#hub = hub;
    this.#agent = agent;
    this.#link = link;
  }

  get connectionId(): string {
    return this.#link.connectionId;
  }

  get deviceId(): string | undefined {
    return this.#link.principal.deviceId;
  }

  get stateUpdates(): boolean {
    return this.#stateUpdates;
  }

  info(): ConnectionInfo {
    const deviceId = this.#link.principal.deviceId;
    return {
      connectionId: this.#link.connectionId,
      principal: this.#link.principal.label,
      ...(deviceId === undefined ? {} : { deviceId }),
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
    this.#stateUpdates = asksForStateUpdates(request);
    const init = this.#agent.process.initializeResult as InitializeResponse;
    // A paired device may subscribe to Web Push: it learns the key to subscribe with.
    const push = this.#hub.devicePush();
    const webPush = push !== undefined && this.#link.principal.deviceId !== undefined ? { [AcpExt.webPush]: { applicationServerKey: push.applicationServerKey } } : {};
    return { jsonrpc: "2.0", id: request.id, result: clientInitializeResult(init, request, webPush) };
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
    for (const session of this.#sessions.values()) {
      this.#hub.detachSession(session, this);
      this.#unshow(session);
    }
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
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    this.#sessions.delete(sessionId);
    this.#link.sessionLeft?.(sessionId);
    this.#unshow(session);
  }

  shows(sessionId: string): boolean {
    return this.#shown.has(sessionId) && this.#sessions.has(sessionId);
  }

  // ---- Messages to the client ----

  sendNotification(method: string, params: unknown, sessionId?: string): void {
    if (this.#open) this.#send({ jsonrpc: "2.0", method, params }, sessionId);
  }

  /** Sends a request of ours to the client; false when the connection is gone. */
  sendRequest(id: string, method: string, params: unknown, sessionId?: string): boolean {
    if (!this.#open) return false;
    this.#send({ jsonrpc: "2.0", id, method, params }, sessionId);
    return true;
  }

  /** Everything for the client goes here: what belongs to a session being replayed waits for the replay. */
  #send(message: JsonRpcMessage, sessionId?: string, answers?: string): void {
    const held = sessionId === undefined ? undefined : this.#held.get(sessionId);
    if (held) held.push(answers === undefined ? { message } : { message, answers });
    else this.#link.send(message, sessionId, answers);
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
      case AcpExt.sessionHistory:
        return this.#earlierTurns(params);
      case AcpExt.sessionDetach: {
        const session = this.#attached(params);
        this.#sessions.delete(session.id);
        this.#hub.detachSession(session, this);
        this.#link.sessionLeft?.(session.id);
        this.#unshow(session);
        return {};
      }
      case AcpExt.pushSubscribe: {
        const subscription = params["subscription"];
        await this.#devicePush((push, deviceId) => push.subscribe(deviceId, subscription));
        return {};
      }
      case AcpExt.pushUnsubscribe:
        await this.#devicePush((push, deviceId) => push.unsubscribe(deviceId));
        return {};
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

  /**
   * session/new. With a request key (`_meta.acpRemote.requestKey`), a try
   * whose answer was lost with the link is answered, when its client asks
   * again with the key, with the same session and the same result: this
   * connection then follows the session as session/load would have it.
   */
  async #newSession(params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const requestKey = requestKeyOf(params);
    const { session, result, again } = await this.#hub.newSession(this.#agent, this.#link.principal, params, signal, requestKey);
    if (again) {
      // Taken from the connection that lost the answer, its history first (what the client missed since).
      await this.#loadSession({ sessionId: session.id });
      return result;
    }
    if (!this.#open) {
      // The client left before the answer. Without a key it can never learn
      // of the session, so it ends; with one, a client that dropped asks
      // again and gets it, so it stays (unless the client ended the
      // connection itself, which aborts its requests).
      if (requestKey === undefined || signal.aborted) this.#hub.endSession(session);
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
   * agent supports. The client may ask for its latest turns only.
   */
  async #loadSession(params: Record<string, unknown>, how: "load" | "resume" = "load"): Promise<unknown> {
    const turns = askedTurns(params);
    const session = await this.#followable(params);
    const earlier = await this.#follow(session, "take", how === "load", turns);
    this.#hub.tellState(session, this);
    return sessionState(session, earlier);
  }

  /**
   * session/attach (the multi-client attach proposal): follow the session
   * beside the clients that already do. `historyPolicy` says what is
   * replayed: `full` (the default) the journal, or its latest turns when the
   * client asks, `pending_only` and `none` nothing (open permission requests
   * are offered either way).
   */
  async #attachSession(params: Record<string, unknown>): Promise<unknown> {
    const turns = askedTurns(params);
    const session = await this.#followable(params);
    const policy = params["historyPolicy"];
    const historyPolicy: AttachHistoryPolicy = policy === "none" || policy === "pending_only" ? policy : "full";
    const earlier = await this.#follow(session, "join", historyPolicy === "full" && !this.#sessions.has(session.id), turns);
    this.#hub.tellState(session, this);
    return {
      ...sessionState(session, earlier),
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

  /**
   * Follows the session, and with `replay` sends its history first (its
   * latest `turns` turns when given: then answers how many turns come
   * before them). The session is followed before its history is read, in the
   * same step, so an update is either in the history or comes live, never
   * neither nor both; what comes live (updates, permission requests offered
   * on attach) waits until the history is out. If the history cannot be
   * read, the session is not followed here after all.
   */
  async #follow(session: HubSession, mode: "take" | "join", replay: boolean, turns?: number): Promise<number | undefined> {
    if (!replay) {
      this.#sessions.set(session.id, session);
      this.#hub.attach(session, this, mode);
      return undefined;
    }
    const held: Array<{ message: JsonRpcMessage; answers?: string }> = [];
    this.#held.set(session.id, held);
    let history: SessionUpdate[] | undefined;
    let earlier: number | undefined;
    try {
      this.#sessions.set(session.id, session);
      this.#hub.attach(session, this, mode);
      history = await this.#hub.history(session);
      if (turns !== undefined) ({ updates: history, earlier } = latestTurns(history, turns));
    } finally {
      if (this.#held.get(session.id) === held) this.#held.delete(session.id);
      if (history === undefined) {
        if (this.#sessions.get(session.id) === session) {
          this.#sessions.delete(session.id);
          this.#hub.detachSession(session, this);
          this.#link.sessionLeft?.(session.id);
        }
      } else if (this.#open) {
        for (const update of history) {
          this.#link.send({ jsonrpc: "2.0", method: Acp.client.session.update, params: { sessionId: session.id, update } }, session.id);
        }
        for (const { message, answers } of held) this.#link.send(message, session.id, answers);
      }
    }
    return earlier;
  }

  /** `_acp-remote/session/history`: earlier turns of a session followed here, for a client that had the latest first. */
  async #earlierTurns(params: Record<string, unknown>): Promise<unknown> {
    const session = this.#attached(params);
    const before = params["before"];
    if (!isTurnCount(before, 0)) throw new RpcFailure(ErrorCode.InvalidParams, "before must be a number of turns, 0 or more");
    const turns = params["turns"];
    if (!isTurnCount(turns, 1)) throw new RpcFailure(ErrorCode.InvalidParams, "turns must be a number of turns, 1 or more");
    return earlierTurns(await this.#hub.history(session), before, turns);
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
        _meta: { [AcpExt.metaKey]: { running: s.running, state: s.state } },
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
    if (method === AcpExt.visibility) {
      // Counted only for a session followed here: it stops counting when the connection stops following it.
      if (!session) return;
      if (isRecord(params) && params["visible"] === true) this.#shown.add(session.id);
      else this.#unshow(session);
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

  /**
   * Runs a Web Push subscription change for the paired device whose token
   * this connection uses. Only a device may hold one: its subscription then
   * goes when the device is revoked, and an answer from a notification is
   * bound to a credential the person can take back on its own.
   */
  async #devicePush(change: (push: DevicePush, deviceId: string) => Promise<void>): Promise<void> {
    const push = this.#hub.devicePush();
    if (push === undefined) throw new RpcFailure(ErrorCode.MethodNotFound, "this server sends no Web Push notifications");
    const deviceId = this.#link.principal.deviceId;
    if (deviceId === undefined) throw new RpcFailure(ErrorCode.InvalidRequest, "only a paired device can get notifications: pair this browser as a device (Connect a Device) first");
    await change(push, deviceId);
  }

  /** The client no longer shows the session (it said so, or stopped following it). */
  #unshow(session: HubSession): void {
    if (this.#shown.delete(session.id)) this.#hub.visibilityChanged(session);
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
    this.#send(response, paramsSessionId(request), request.method);
  }

  #end(): void {
    for (const forwarded of this.#forwarded.values()) forwarded.reject(new RpcFailure(ErrorCode.InternalError, "the client is gone"));
    this.#forwarded.clear();
    this.#hub.connectionClosed(this);
  }
}

/** Did the client ask, in its initialize's `clientCapabilities._meta.acpRemote`, to be told its sessions' state? */
function asksForStateUpdates(request: JsonRpcRequest): boolean {
  const capabilities = isRecord(request.params) ? request.params["clientCapabilities"] : undefined;
  const meta = isRecord(capabilities) ? capabilities["_meta"] : undefined;
  const ours = isRecord(meta) ? meta[AcpExt.metaKey] : undefined;
  return isRecord(ours) && ours[AcpExt.stateUpdates] === true;
}

/**
 * What a client following a session learns of its state: modes, config
 * options, whether a turn runs, and when it had the latest turns of the
 * history only, how many come before them.
 */
function sessionState(session: HubSession, earlier?: number): Record<string, unknown> {
  return {
    ...(session.modes ? { modes: session.modes } : {}),
    ...(session.configOptions.length > 0 ? { configOptions: session.configOptions } : {}),
    _meta: { [AcpExt.metaKey]: { running: session.running > 0, ...(earlier === undefined ? {} : { [AcpExt.history]: { earlier } }) } },
  };
}

/**
 * How many of the latest turns a session/load or session/attach asks for
 * (`_meta.acpRemote.history.turns`); undefined for the whole history.
 */
function askedTurns(params: Record<string, unknown>): number | undefined {
  const meta = params["_meta"];
  const ours = isRecord(meta) ? meta[AcpExt.metaKey] : undefined;
  const history = isRecord(ours) ? ours[AcpExt.history] : undefined;
  if (history === undefined) return undefined;
  const turns = isRecord(history) ? history["turns"] : undefined;
  if (!isTurnCount(turns, 1)) throw new RpcFailure(ErrorCode.InvalidParams, `_meta.${AcpExt.metaKey}.${AcpExt.history}.turns must be a number of turns, 1 or more`);
  return turns;
}

function isTurnCount(value: unknown, least: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= least;
}

function toErrorResponse(id: JsonRpcId, error: unknown): JsonRpcResponse {
  if (error instanceof RpcFailure) return errorResponse(id, error.code, error.message, error.data);
  return errorResponse(id, ErrorCode.InternalError, errorMessage(error));
}
