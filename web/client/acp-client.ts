// An ACP client of one agent on /acp: opens a link (WebSocket, else
// Streamable HTTP), initializes, and offers the few requests the page makes.
// What the agent sends for a session (updates, permission requests and their
// withdrawal) goes to the events; any other request of the agent is answered
// "method not found", since the sidecar hosts files and terminals itself.
import type {
  InitializeRequest,
  ListSessionsResponse,
  NewSessionResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionConfigOption,
  SessionInfo,
  SessionModeState,
  SessionNotification,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { JsonRpcId, JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { type PermissionResolution, resolutionOfNotice } from "../../protocol/permission-outcome.ts";
import type { Endpoint } from "./endpoint.ts";
import { openHttp } from "./http-transport.ts";
import { RpcError, RpcPeer } from "./rpc.ts";
import { UnauthorizedError, type LinkEnd, type Transport } from "./transport.ts";
import type { ListedSessionState, SessionActivity } from "../../protocol/acp.ts";
import { HISTORY, HISTORY_PAGES, META_KEY, Method, PERMISSION_RESOLVED, PROTOCOL_VERSION, REQUEST_KEY, SessionState, STATE_UPDATE, STATE_UPDATES, WEB_PUSH } from "./wire.ts";
import { openWebSocket, type Opened } from "./ws-transport.ts";

export interface AcpClientEvents {
  onUpdate(notification: SessionNotification): void;
  onPermission(requestId: string | number, request: RequestPermissionRequest): void;
  /**
   * The request is no longer open: how it was settled and by whom when the
   * server said (the attach proposal's `permission_resolved`, with our
   * `_meta`), undefined when it was only withdrawn.
   */
  onPermissionWithdrawn(requestId: string | number, resolution: PermissionResolution | undefined): void;
  /** The session's state changed, or its state after a load or attach (servers that offer `state_update`). */
  onState(sessionId: string, notice: StateNotice): void;
  onEnd(end: LinkEnd): void;
}

/** What session/load tells of the session besides its replay. */
export interface LoadedSession {
  modes?: SessionModeState | null;
  configOptions?: SessionConfigOption[] | null;
  _meta?: Record<string, unknown> | null;
}

/**
 * A `state_update` of the ACP v2 draft: the session's state, and for the idle
 * that ends a turn its stop reason (`error` with the failure's message when it
 * failed). An idle without a stop reason ends no turn (a snapshot).
 */
export interface StateNotice {
  state: SessionActivity;
  stopReason?: string;
  error?: string;
}

/** What session/list says a session is doing (`_meta.acpRemote.state`, else its `running` flag). */
export function listedState(info: { _meta?: Record<string, unknown> | null }): ListedSessionState | undefined {
  const ours = info._meta?.[META_KEY];
  const state = isRecord(ours) ? ours["state"] : undefined;
  if (typeof state === "string" && (Object.values(SessionState) as string[]).includes(state)) return state as ListedSessionState;
  const running = runningFlag(info);
  return running === undefined ? undefined : running ? SessionState.Running : SessionState.Idle;
}

/** How many turns come before those a paged session/load replayed (`_meta.acpRemote.history.earlier`); 0 when none, or when it replayed all. */
export function earlierTurnsOf(loaded: LoadedSession): number {
  const ours = loaded._meta?.[META_KEY];
  const history = isRecord(ours) ? ours[HISTORY] : undefined;
  const earlier = isRecord(history) ? history["earlier"] : undefined;
  return typeof earlier === "number" && Number.isSafeInteger(earlier) && earlier > 0 ? earlier : 0;
}

/** Whether a turn runs on the session, as the server says in the `_meta` of session/list and session/load. */
export function runningFlag(info: { _meta?: Record<string, unknown> | null }): boolean | undefined {
  const ours = info._meta?.[META_KEY];
  return isRecord(ours) && typeof ours["running"] === "boolean" ? ours["running"] : undefined;
}

/** Once a WebSocket could not be opened, the page sticks to Streamable HTTP. */
let webSocketWorks = typeof WebSocket === "function";

export class AcpClient {
  readonly profile: Transport["profile"];
  readonly #transport: Transport;
  readonly #rpc: RpcPeer;
  /** Session of each open permission request, to answer it on that session's stream. */
  readonly #permissions = new Map<JsonRpcId, string>();
  /** The server offers `session/attach` (`sessionCapabilities.attach`). */
  readonly #canAttach: boolean;
  /** The server tells the sessions' state as `state_update` (`_meta.acpRemote.stateUpdates`): no need to poll session/list. */
  readonly stateUpdates: boolean;
  /** The server gives a session's history in pages on request (`_meta.acpRemote.historyPages`). */
  readonly historyPages: boolean;
  /** The key to subscribe to Web Push with, when the server offers this page a subscription (its token is a paired device's). */
  readonly webPushKey: string | undefined;

  private constructor(opened: Opened, rpc: RpcPeer, permissions: Map<JsonRpcId, string>) {
    this.#transport = opened.transport;
    const result = opened.initialized.result;
    const capabilities = isRecord(result) && isRecord(result["agentCapabilities"]) ? result["agentCapabilities"]["sessionCapabilities"] : undefined;
    this.#canAttach = isRecord(capabilities) && isRecord(capabilities["attach"]);
    const meta = isRecord(result) && isRecord(result["_meta"]) ? result["_meta"][META_KEY] : undefined;
    this.stateUpdates = isRecord(meta) && meta[STATE_UPDATES] === true;
    this.historyPages = isRecord(meta) && meta[HISTORY_PAGES] === true;
    const webPush = isRecord(meta) ? meta[WEB_PUSH] : undefined;
    this.webPushKey = isRecord(webPush) && typeof webPush["applicationServerKey"] === "string" ? webPush["applicationServerKey"] : undefined;
    this.profile = opened.transport.profile;
    this.#rpc = rpc;
    this.#permissions = permissions;
  }

  /** Opens and initializes a link; rejects with UnauthorizedError when the token is refused. */
  static async connect(endpoint: Endpoint, events: AcpClientEvents): Promise<AcpClient> {
    const permissions = new Map<JsonRpcId, string>();
    let rpc: RpcPeer | undefined;
    const transportEvents = {
      onMessage: (message: Parameters<RpcPeer["receive"]>[0]) => rpc?.receive(message),
      onClose: (end: LinkEnd) => {
        rpc?.failAll("the connection was lost");
        events.onEnd(end);
      },
    };
    const params: InitializeRequest = {
      protocolVersion: PROTOCOL_VERSION,
      // Told each session's state as it changes, instead of polling session/list for it.
      clientCapabilities: { _meta: { [META_KEY]: { [STATE_UPDATES]: true } } },
      clientInfo: { name: "acp-remote-web", version: "1" },
    };
    const initialize: JsonRpcRequest = { jsonrpc: "2.0", id: 0, method: Method.initialize, params };
    let opened: Opened | undefined;
    if (webSocketWorks) {
      try {
        opened = await openWebSocket(endpoint, transportEvents, initialize);
      } catch {
        // A proxy without WebSocket support, or a refused token: Streamable HTTP tells which.
      }
    }
    if (opened === undefined) {
      opened = await openHttp(endpoint, transportEvents, initialize);
      webSocketWorks = false;
    }
    if (opened.initialized.error) {
      opened.transport.close();
      if (opened.initialized.error.code === ErrorCode.AuthRequired) throw new UnauthorizedError();
      throw new RpcError(opened.initialized.error);
    }
    const send = opened.transport.send.bind(opened.transport);
    rpc = new RpcPeer(send, {
      onRequest: (request) => {
        const params = request.params;
        if (request.method === Method.requestPermission && isRecord(params) && request.id !== null) {
          const request_ = params as unknown as RequestPermissionRequest;
          permissions.set(request.id, request_.sessionId);
          events.onPermission(request.id, request_);
          return;
        }
        rpc?.respondError(request.id, { code: ErrorCode.MethodNotFound, message: `${request.method} is not offered by the web client` }, sessionOf(params));
      },
      onNotification: (method, params) => {
        if (method === Method.sessionUpdate && isRecord(params)) {
          const update = params["update"];
          if (isRecord(update) && update["sessionUpdate"] === STATE_UPDATE) {
            const notice = stateNotice(update);
            if (notice !== undefined && typeof params["sessionId"] === "string") events.onState(params["sessionId"], notice);
            return;
          }
          if (isRecord(update) && update["sessionUpdate"] === PERMISSION_RESOLVED) {
            // Sent before the $/cancel_request that follows it, so the view can say it was answered elsewhere.
            const id = update["requestId"];
            if ((typeof id === "string" || typeof id === "number") && permissions.delete(id)) events.onPermissionWithdrawn(id, resolutionOfNotice(update));
            return;
          }
          events.onUpdate(params as unknown as SessionNotification);
        } else if (method === Method.cancelRequest && isRecord(params)) {
          const id = params["requestId"];
          if ((typeof id === "string" || typeof id === "number") && permissions.delete(id)) events.onPermissionWithdrawn(id, undefined);
        }
      },
    }, 1);
    return new AcpClient(opened, rpc, permissions);
  }

  async listSessions(): Promise<SessionInfo[]> {
    const result = await this.#rpc.request<ListSessionsResponse>(Method.sessionList, {});
    return result.sessions;
  }

  /**
   * `requestKey` (from newRequestKey) names the session the page means to
   * create: sent again with every try, it gets the session an earlier try
   * made whose answer was lost with the link, not a second one. The server
   * replays that session's history before the answer, as for session/load.
   */
  async newSession(cwd: string, requestKey: string): Promise<NewSessionResponse> {
    const params = { cwd, mcpServers: [], _meta: { [META_KEY]: { [REQUEST_KEY]: requestKey } } };
    const result = await this.#rpc.request<NewSessionResponse>(Method.sessionNew, params);
    this.#transport.openSession(result.sessionId);
    return result;
  }

  /**
   * Follows the session here; the server replays its history as session/update
   * first. With `session/attach` (when the server offers it) the page joins
   * the editor and other clients instead of taking the session from them, so
   * two tabs or a phone and a laptop can follow one session. With `turns`,
   * from a server that gives pages of history, only the latest turns are
   * replayed (earlierTurnsOf tells how many come before: earlierTurns has them).
   */
  loadSession(sessionId: string, cwd: string, turns?: number): Promise<LoadedSession> {
    // Opened before the load: the server holds the replay until a reader attaches.
    this.#transport.openSession(sessionId);
    const pages = turns !== undefined && this.historyPages ? { _meta: { [META_KEY]: { [HISTORY]: { turns } } } } : {};
    if (this.#canAttach) return this.#rpc.request<LoadedSession>(Method.sessionAttach, { sessionId, historyPolicy: "full", ...pages }, sessionId);
    return this.#rpc.request<LoadedSession>(Method.sessionLoad, { sessionId, cwd, mcpServers: [], ...pages }, sessionId);
  }

  /** The `turns` turns before turn `before` of a session followed here, and how many come before them. */
  earlierTurns(sessionId: string, before: number, turns: number): Promise<{ updates: SessionUpdate[]; earlier: number }> {
    return this.#rpc.request(Method.sessionHistory, { sessionId, before, turns }, sessionId);
  }

  prompt(sessionId: string, text: string): Promise<PromptResponse> {
    return this.#rpc.request<PromptResponse>(Method.sessionPrompt, { sessionId, prompt: [{ type: "text", text }] }, sessionId);
  }

  cancel(sessionId: string): void {
    this.#rpc.notify(Method.sessionCancel, { sessionId }, sessionId);
  }

  setMode(sessionId: string, modeId: string): Promise<unknown> {
    return this.#rpc.request(Method.sessionSetMode, { sessionId, modeId }, sessionId);
  }

  setConfigOption(sessionId: string, configId: string, value: string | boolean): Promise<unknown> {
    return this.#rpc.request(Method.sessionSetConfigOption, { sessionId, configId, value }, sessionId);
  }

  /** `optionId` null answers the request as cancelled. */
  answerPermission(requestId: JsonRpcId, optionId: string | null): void {
    const sessionId = this.#permissions.get(requestId);
    if (sessionId === undefined) return;
    this.#permissions.delete(requestId);
    const result: RequestPermissionResponse = { outcome: optionId === null ? { outcome: "cancelled" } : { outcome: "selected", optionId } };
    this.#rpc.respond(requestId, result, sessionId);
  }

  /** Keeps this browser's Web Push subscription on the server, for this paired device (it replaces an earlier one). */
  pushSubscribe(subscription: PushSubscriptionJSON): Promise<unknown> {
    return this.#rpc.request(Method.pushSubscribe, { subscription });
  }

  pushUnsubscribe(): Promise<unknown> {
    return this.#rpc.request(Method.pushUnsubscribe, {});
  }

  /** Whether the page shows the session where a person can see it: the server notifies nobody of it meanwhile. */
  setVisibility(sessionId: string, visible: boolean): void {
    this.#rpc.notify(Method.visibility, { sessionId, visible }, sessionId);
  }

  /** Ends the link. The server keeps the sessions (they detach), so they can be loaded again. */
  close(): void {
    this.#transport.close();
    this.#rpc.failAll("closed");
  }
}

/**
 * A request key for one session the page means to create: random, 128 bits.
 * `randomUUID` exists only in secure contexts, and a page served over plain
 * HTTP on a LAN is none; `getRandomValues` exists everywhere.
 */
export function newRequestKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The notice a `state_update` carries; undefined for a state this page does not know. */
function stateNotice(update: Record<string, unknown>): StateNotice | undefined {
  const state = update["state"];
  if (state !== SessionState.Running && state !== SessionState.RequiresAction && state !== SessionState.Idle) return undefined;
  const notice: StateNotice = { state };
  if (typeof update["stopReason"] === "string") notice.stopReason = update["stopReason"];
  const error = update["error"];
  if (isRecord(error) && typeof error["message"] === "string") notice.error = error["message"];
  return notice;
}

function sessionOf(params: unknown): string | undefined {
  return isRecord(params) && typeof params["sessionId"] === "string" ? params["sessionId"] : undefined;
}
