// The contract between the remote transport (/acp, both profiles) and the hub
// that multiplexes remote sessions onto shared agent processes. The transport
// knows HTTP, streams and WebSockets; the hub knows sessions, agents, journals
// and permissions. Neither reaches into the other.
import type { ContentBlock, SessionNotification, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type {
  NewSessionParams,
  OpenedSession,
  PermissionAnswer,
  PermissionInfo,
  PermissionPolicy,
  PermissionSettledEvent,
  PromptParams,
  PromptResult,
  SessionList,
  SessionStateEvent,
  SetConfigOptionParams,
  SetModeParams,
  StatusSnapshot,
  Transcript,
  TurnEvent,
} from "../../protocol/control.ts";
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../protocol/jsonrpc.ts";

/** Who is calling: derived from the credential, never from a transport id. */
export interface Principal {
  /** Stable, non-secret id of the person; the same for every token of that person (rotation and device tokens keep it). */
  readonly id: string;
  /** Human label for logs and views ("owner", a configured key name). */
  readonly label: string;
  /** The paired device whose token was used, if it was a device token. */
  readonly deviceId?: string;
}

/** The person who runs the server: its access tokens, its paired devices and the editor all stand for this one principal. */
export const OWNER: Principal = { id: "owner", label: "owner" };

const PERSON_ID_PREFIX = "person:";

/** The person a labelled token stands for (`--token NAME:TOKEN`): one principal per NAME, never OWNER. */
export function personPrincipal(label: string): Principal {
  return { id: `${PERSON_ID_PREFIX}${label}`, label };
}

/** The name of the person behind a principal id: a labelled person's NAME, else the id itself. */
export function personName(principalId: string): string {
  return principalId.startsWith(PERSON_ID_PREFIX) ? principalId.slice(PERSON_ID_PREFIX.length) : principalId;
}

/** One remote connection as the hub sees it; each transport profile implements it. */
export interface ClientLink {
  readonly connectionId: string;
  readonly principal: Principal;
  /** "http2", "http1" or "websocket", for views and logs. */
  readonly profile: string;
  /**
   * Delivers one message to the remote client. `sessionId` is the session it
   * belongs to, if any; for a response, `answers` is the method of the request
   * it answers. Which stream carries it is the transport's rule (Streamable
   * HTTP: spec: POST /acp, "Which stream carries the response"); a WebSocket
   * carries everything on its one socket.
   */
  send(message: JsonRpcMessage, sessionId?: string, answers?: string): void;
  /**
   * The session is no longer attached to this connection (closed, deleted,
   * detached, or taken by another connection): what the transport keeps for
   * it (a Streamable HTTP session stream) may go.
   */
  sessionLeft?(sessionId: string): void;
}

/** What the transport asks of the hub about a session id it was given. */
export type SessionAccess =
  /** Attached to this connection. */
  | "attached"
  /** Known to the server, owned by the same principal, not attached here (resume flow). */
  | "loadable"
  /** Unknown, ended, or owned by another principal: answered as unknown (404). */
  | "unknown";

export interface HubConnection {
  /**
   * Answers the client's `initialize` request with the agent's capabilities
   * (as the sidecar offers them: `loadSession` is always true, the journal
   * replays). The transport adds `connectionId` to the result.
   */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** One message the client sent after initialize, already checked to be a single JSON-RPC message. */
  receive(message: JsonRpcMessage): void;
  /** What this connection may do with a session id. */
  sessionAccess(sessionId: string): SessionAccess;
  /**
   * Looks the session up where `sessionAccess` cannot answer at once (a
   * session another node of a shared store runs or ran), so that the next
   * `sessionAccess` knows it. Awaited by the transport before it checks a
   * session header; absent where every session is known at once.
   */
  resolveSession?(sessionId: string): Promise<void>;
  /** The network dropped: sessions detach, keep running and journal what they emit. */
  detach(): void;
  /** DELETE (or server shutdown): the connection and all its sessions end for good. */
  close(): void;
}

export interface ConnectOptions {
  /** Agent to talk to (`/acp?agent=NAME`); the default agent when absent. */
  agent?: string;
}

/** Thrown by `connect` for an agent name that is not configured (answered 404). */
export class UnknownAgentError extends Error {
  readonly agent: string;
  constructor(agent: string) {
    super(`unknown agent "${agent}"`);
    this.name = "UnknownAgentError";
    this.agent = agent;
  }
}

/**
 * The editor attached through the control protocol. It is offered every
 * permission request (policy permitting) and, when it says so, serves the
 * agents' `fs/*` and `terminal/*` requests.
 */
export interface EditorLink {
  readonly host: { fs: boolean; terminal: boolean };
  /** Shows the request; resolves with the person's answer; `signal` aborts when the other side answered first. */
  requestPermission(info: PermissionInfo, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Serves one ACP host request (`fs/*`, `terminal/*`) with ACP params and result. */
  hostRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
}

/** What the control protocol needs of the hub (views, transcripts, turn control). */
export interface HubControl {
  status(): Omit<StatusSnapshot, "server" | "devices">;
  transcript(sessionId: string): Promise<Transcript>;
  cancelTurn(sessionId: string): void;
  closeSession(sessionId: string): void;
  setEditor(editor: EditorLink | undefined): void;
  setPermissionPolicy(policy: PermissionPolicy): void;
  /** Called (debounced by the caller if it likes) whenever the status changes. Returns an unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Every live `session/update`, of every session. Returns an unsubscribe. */
  onSessionUpdate(listener: (notification: SessionNotification) => void): () => void;
  /** Every turn's start and end, on every session, whoever sent the prompt. Returns an unsubscribe. */
  onTurn(listener: (event: TurnEvent) => void): () => void;
  /** A session's modes or config options changed. Returns an unsubscribe. */
  onSessionState(listener: (event: SessionStateEvent) => void): () => void;
  /** Every permission request settled, how and by whom, before the editor's prompt of it is withdrawn. Returns an unsubscribe. */
  onPermissionSettled(listener: (event: PermissionSettledEvent) => void): () => void;
  /** A session for the server's person (`OWNER`), started from the editor. */
  newSession(params: NewSessionParams): Promise<OpenedSession>;
  /** The journal and live state of a session, to show it. */
  openSession(sessionId: string): Promise<OpenedSession>;
  /** A prompt turn from the editor; resolves when it ends. */
  prompt(params: PromptParams): Promise<PromptResult>;
  setMode(params: SetModeParams): Promise<null>;
  setConfigOption(params: SetConfigOptionParams): Promise<SessionStateEvent>;
  listSessions(): SessionList;
}

/** What happens to a permission request during a one-shot run when nobody is there to answer. */
export type OneShotPermissionPolicy = "reject" | "allow" | "editor";

export interface OneShotOptions {
  signal: AbortSignal;
  /** Each `session/update` of the run, in order. */
  onUpdate(update: SessionUpdate): void;
  /** The principal id the turn runs for: it works in that person's folders. */
  owner: string;
  /** Working folder of the server's own person's turn; the sidecar's default cwd when absent. Another person's turn works in their first folder. */
  cwd?: string;
  permissions?: OneShotPermissionPolicy;
  /** The deferred completion the turn runs (its /v1 request_id): its permission requests carry it. */
  requestId?: string;
}

export interface OneShotResult {
  stopReason: StopReason;
  /** Token usage when the agent reports it (ACP `usage` of the prompt response). */
  usage?: { inputTokens?: number; outputTokens?: number; thoughtTokens?: number; cachedReadTokens?: number; totalTokens?: number };
}

/** One-shot sessions for /v1: every configured agent is a model. */
export interface OneShotRunner {
  /** Names of the configured agents, the default first. */
  agentNames(): string[];
  /** Runs one prompt turn on a fresh session of `agent`, then closes the session. */
  runPrompt(agent: string, prompt: ContentBlock[], options: OneShotOptions): Promise<OneShotResult>;
}

/** What the remote transport needs of the hub: nothing but connections. */
export interface ConnectionHub {
  /** Opens the hub side of a new remote connection. Throws UnknownAgentError. */
  connect(link: ClientLink, options?: ConnectOptions): HubConnection;
}

/** The session a notice is about, as a notification names it. */
export interface NoticeSession {
  sessionId: string;
  agent: string;
  /** The person whose session it is (Principal.id): only that person's channels hear of it. */
  ownerId: string;
  title?: string;
}

/**
 * What may be worth telling a person away from the page (sidecar/notify/
 * decides whom and how): a permission request opened or was settled, a turn
 * ended (with the first line of the agent's answer), an agent stopped for
 * good, or no page shows the session any more.
 */
export type HubNotice =
  | { kind: "permission"; session: NoticeSession; permission: PermissionInfo }
  | { kind: "permission_settled"; sessionId: string; permissionId: string }
  | { kind: "turn_ended"; session: NoticeSession; stopReason: string; answer?: string; error?: string }
  | { kind: "agent_failed"; agent: string; message: string }
  | { kind: "hidden"; session: NoticeSession };

/** The Web Push subscriptions of paired devices, as /acp's extension methods reach them (sidecar/notify/). */
export interface DevicePush {
  /** The server's VAPID public key (base64url), which browsers subscribe with. */
  readonly applicationServerKey: string;
  /** Keeps the device's subscription (the browser's PushSubscription JSON); RpcFailure InvalidParams for one that is not. */
  subscribe(deviceId: string, subscription: unknown): Promise<void>;
  unsubscribe(deviceId: string): Promise<void>;
}

/** What notifications need of the hub: its notices, whether a page shows a session, and a way to answer. */
export interface HubNotices {
  /** Every notice, of every session of this node. Returns an unsubscribe. */
  onNotice(listener: (notice: HubNotice) => void): () => void;
  /** Does a client of the session's person show the session on a page a person can see now? */
  shown(sessionId: string): boolean;
  /** The open requests of the session a notification may answer, oldest first. */
  pending(sessionId: string): PermissionInfo[];
  /** Is the request still open, and may a notification answer it? */
  answerable(permissionId: string): boolean;
  /** An answer from a notification, settled as every answer is (the first wins); false when it is not answerable or `optionId` was not offered. */
  answer(permissionId: string, optionId: string): boolean;
  /** Offers Web Push subscriptions to paired devices over /acp (the initialize result names the key). */
  setDevicePush(push: DevicePush | undefined): void;
}

export interface Hub extends ConnectionHub, HubControl, OneShotRunner {
  /** Ends every agent and session; used on shutdown. */
  shutdown(): Promise<void>;
}
