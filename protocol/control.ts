// The control protocol between an editor and the sidecar it hosts: JSON-RPC
// 2.0 over the sidecar's stdio with Content-Length framing (the framing of LSP,
// so vscode-languageclient can start and supervise it). docs/control-protocol.md
// documents every method; both sides import these constants, so no call site
// spells a method name.
//
// Handshake: the editor sends LSP `initialize` with `initializationOptions:
// ControlInitOptions`; the sidecar answers `{ capabilities: {}, serverInfo }`,
// starts its listener and sends `acpRemote/serverStarted`. `shutdown`/`exit`
// stop it as they stop a language server.
import { Acp } from "./acp.ts";
import { NotificationType, RequestType, RequestType0 } from "vscode-jsonrpc";
import type {
  ContentBlock,
  PermissionOption,
  RequestPermissionOutcome,
  SessionConfigOption,
  SessionModeState,
  SessionNotification,
  StopReason,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { AgentSpec } from "./agent-spec.ts";
import type { PermissionSettledBy } from "./history.ts";

/** Who may answer an agent's permission request while an editor is attached. */
export type PermissionPolicy = "editor" | "client" | "both";

/** `initializationOptions` of the LSP `initialize` request. */
export interface ControlInitOptions {
  /** The editor serves `fs/*` and `terminal/*` for the agents while attached. */
  host: { fs: boolean; terminal: boolean };
  permissionPolicy: PermissionPolicy;
  /**
   * The access tokens of the server's person. They take the place of the
   * sidecar's own (`--token TOKEN`, `ACP_REMOTE_TOKEN`, the generated one);
   * a person's labelled token (`--token NAME:TOKEN`) stays. They travel on the
   * control channel, which only the editor and the sidecar hold, and never in
   * the environment, which every process the sidecar starts would inherit.
   * `acpRemote/auth/setTokens` rotates them.
   */
  tokens?: string[];
  /** Listener settings from the editor's configuration; each given field overrides the sidecar's command-line value. */
  serve?: { host?: string; port?: number; tls?: boolean; agents?: AgentSpec[]; upstreamUrl?: string };
}

/** Why the listener could not start, with what the person can do about it. */
export interface ServerFailure {
  /** Node's error code when there is one (`EADDRINUSE`, `EACCES`, ...), else `ESERVE`. */
  code: string;
  message: string;
  /** What to change to make it work, in one sentence. */
  fix?: string;
}

export interface ServerInfo {
  /** Base URL remote clients use (`/acp` and `/v1` hang off it). */
  url: string;
  host: string;
  port: number;
  tls: boolean;
  dataDir: string;
  version: string;
  /** The sidecar's process id (for the editor's log and views). */
  pid?: number;
  /**
   * The addresses people use through a proxy or tunnel (`--public-url`,
   * `ACP_REMOTE_PUBLIC_URL`), without a trailing slash, as the listener
   * started; a pairing link names the first. `acpRemote/server/addPublicUrl`
   * adds more.
   */
  publicUrls?: string[];
}

export type AgentState = "starting" | "running" | "restarting" | "failed" | "stopped";

export interface AgentInfo {
  name: string;
  command: string;
  state: AgentState;
  pid?: number;
  restarts: number;
  lastError?: string;
  isDefault: boolean;
}

export interface ConnectionInfo {
  connectionId: string;
  /** Label of the person its token stands for ("owner": the server's own person). */
  principal: string;
  /** The paired device whose token it uses (its name is in `devices`); absent for an access token. */
  deviceId?: string;
  profile: string;
  connectedAt: number;
  sessions: string[];
}

export type SessionState = "live" | "detached";

export interface SessionInfo {
  sessionId: string;
  agent: string;
  cwd: string;
  state: SessionState;
  /** True while a prompt turn runs. */
  running: boolean;
  connectionId?: string;
  /** Label of the principal that owns it. */
  owner: string;
  createdAt: number;
  updatedAt: number;
  title?: string;
}

export interface PermissionInfo {
  permissionId: string;
  sessionId: string;
  agent: string;
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
  createdAt: number;
  /** The deferred completion (its /v1 `request_id`) whose run asks; absent for a session's request. */
  requestId?: string;
}

/**
 * A deferred completion's state (docs/deferred.md): `pending` waits for a free
 * slot, `running` runs, `done` and `failed` wait for their one GET, `deleted`
 * was retrieved, cancelled or expired.
 */
export type DeferredJobState = "pending" | "running" | "done" | "failed" | "deleted";

/** `acpRemote/deferred/changed`: a deferred completion of the server's own person changed state. */
export interface DeferredJobEvent {
  /** Its /v1 `request_id`. */
  requestId: string;
  state: DeferredJobState;
  /** When it changed, milliseconds since the epoch by the sidecar's clock: with `done` and `failed`, when the job finished. */
  at: number;
}

/** A device paired with the server: its own token, standing for the same person as the editor. */
export interface DeviceInfo {
  deviceId: string;
  /** What the person called it when pairing ("Phone"). */
  label: string;
  createdAt: number;
  /** Last authenticated request or connection with its token; absent before the first. */
  lastUsedAt?: number;
}

export interface StatusSnapshot {
  server: ServerInfo | null;
  agents: AgentInfo[];
  connections: ConnectionInfo[];
  sessions: SessionInfo[];
  permissions: PermissionInfo[];
  /** Paired devices (revoked ones are gone). */
  devices: DeviceInfo[];
}

export interface SessionRef {
  sessionId: string;
}

export interface Transcript {
  sessionId: string;
  /** The journal in order: every `session/update` the session emitted, user prompts included. */
  updates: SessionNotification[];
}

export interface PermissionAnswer {
  outcome: RequestPermissionOutcome;
}

/** `acpRemote/session/new`: a session started from the editor, owned by the server's person. */
export interface NewSessionParams {
  /** A configured agent's name; the default agent when absent. */
  agent?: string;
  /** Absolute working folder (a workspace folder). */
  cwd: string;
}

/** What a view needs to show a session: its journal and its live state. */
export interface OpenedSession {
  sessionId: string;
  agent: string;
  cwd: string;
  title?: string;
  /** Every `session/update` so far, in order (the journal). */
  updates: SessionNotification[];
  /** The agent's modes, when it offers them. */
  modes: SessionModeState | null;
  configOptions: SessionConfigOption[];
  /** True while a prompt turn runs (sent by anyone). */
  running: boolean;
}

export interface PromptParams {
  sessionId: string;
  prompt: ContentBlock[];
}

export interface PromptResult {
  stopReason: StopReason;
}

export interface SetModeParams {
  sessionId: string;
  modeId: string;
}

export interface SetConfigOptionParams {
  sessionId: string;
  configId: string;
  value: string | boolean;
}

export interface SessionList {
  sessions: SessionInfo[];
  agents: AgentInfo[];
}

/** A turn began or ended on a session, whoever sent the prompt (the editor, a phone, another client). */
export interface TurnEvent {
  sessionId: string;
  state: "started" | "ended";
  /** With `ended`: the agent's stop reason, or `"error"` when the turn failed (see `message`). */
  stopReason?: StopReason | "error";
  message?: string;
}

/**
 * `acpRemote/permission/settled`: a permission request of any session was
 * settled, how, and by whom. Sent before the `$/cancelRequest` that withdraws
 * the editor's own prompt of it, so the editor can say "Allowed on Pixel 8"
 * rather than only that its prompt went.
 */
export interface PermissionSettledEvent {
  permissionId: string;
  sessionId: string;
  outcome: RequestPermissionOutcome;
  /** A client, the editor or a notification answered; or nobody did: the agent gave up, the wait ran out, the turn was stopped or interrupted. */
  settledBy: PermissionSettledBy;
  /** The paired device that answered, by the name it was given, when a device did. */
  device?: string;
}

/** The session's modes or config options changed (set by anyone, or by the agent). */
export interface SessionStateEvent {
  sessionId: string;
  modes: SessionModeState | null;
  configOptions: SessionConfigOption[];
}

export interface PairDeviceParams {
  label: string;
}

/** `acpRemote/server/addPublicUrl`: an address of the server that the editor's remote setup gives (asExternalUri). */
export interface AddPublicUrlParams {
  /** An http(s) URL, with a path prefix or without, no query, no fragment. */
  url: string;
}

export interface PublicUrlList {
  /** Every public URL the server accepts now, without a trailing slash, in the order they came. */
  publicUrls: string[];
}

/** The new device and its token: shown once (QR code, link fragment), never stored by the editor. */
export interface PairedDevice {
  device: DeviceInfo;
  token: string;
}

/** Editor → sidecar requests. */
export const ControlRequest = {
  status: new RequestType0<StatusSnapshot, void>("acpRemote/status"),
  transcript: new RequestType<SessionRef, Transcript, void>("acpRemote/session/transcript"),
  cancelTurn: new RequestType<SessionRef, null, void>("acpRemote/session/cancel"),
  closeSession: new RequestType<SessionRef, null, void>("acpRemote/session/close"),
  setTokens: new RequestType<{ tokens: string[] }, null, void>("acpRemote/auth/setTokens"),
  setPermissionPolicy: new RequestType<{ policy: PermissionPolicy }, null, void>("acpRemote/permission/setPolicy"),
  setUpstreamKey: new RequestType<{ key: string | null }, null, void>("acpRemote/upstream/setKey"),
  /** Start a session on an agent; answered once the agent created it. */
  newSession: new RequestType<NewSessionParams, OpenedSession, void>("acpRemote/session/new"),
  /** The journal and live state of any session, to open it in a view (the editor follows every session). */
  openSession: new RequestType<SessionRef, OpenedSession, void>("acpRemote/session/open"),
  /** Send a prompt; answered when the turn ends. Clients attached to the session see it as `user_message_chunk`. */
  prompt: new RequestType<PromptParams, PromptResult, void>("acpRemote/session/prompt"),
  setMode: new RequestType<SetModeParams, null, void>("acpRemote/session/setMode"),
  setConfigOption: new RequestType<SetConfigOptionParams, SessionStateEvent, void>("acpRemote/session/setConfigOption"),
  listSessions: new RequestType0<SessionList, void>("acpRemote/session/list"),
  /** A new device token for the server's person; revoking it later never touches that person's sessions. */
  pairDevice: new RequestType<PairDeviceParams, PairedDevice, void>("acpRemote/device/pair"),
  listDevices: new RequestType0<{ devices: DeviceInfo[] }, void>("acpRemote/device/list"),
  /** The token stops working at once; open connections made with it are closed. */
  revokeDevice: new RequestType<{ deviceId: string }, null, void>("acpRemote/device/revoke"),
  /**
   * The server accepts this address from now on, as it accepts a `--public-url`:
   * its Host and Origin are let in and its path prefix is served. Sent by
   * Connect a Device with what asExternalUri made of the server's URL.
   */
  addPublicUrl: new RequestType<AddPublicUrlParams, PublicUrlList, void>("acpRemote/server/addPublicUrl"),
} as const;

/** Sidecar → editor notifications. */
export const ControlNotification = {
  serverStarted: new NotificationType<ServerInfo>("acpRemote/serverStarted"),
  /** The listener did not start; the sidecar stays up (idle) so the editor does not restart it in a loop. */
  serverFailed: new NotificationType<ServerFailure>("acpRemote/serverFailed"),
  /** Something in the status changed; the snapshot is whole (views redraw from it). */
  statusChanged: new NotificationType<StatusSnapshot>("acpRemote/status/changed"),
  /** A live `session/update` of any session, for transcripts. */
  sessionUpdate: new NotificationType<SessionNotification>("acpRemote/session/update"),
  /** A prompt turn started or ended on any session. */
  turn: new NotificationType<TurnEvent>("acpRemote/session/turn"),
  /** A session's modes or config options changed. */
  sessionState: new NotificationType<SessionStateEvent>("acpRemote/session/state"),
  /** A permission request was settled, and by whom (before the editor's prompt of it is withdrawn). */
  permissionSettled: new NotificationType<PermissionSettledEvent>("acpRemote/permission/settled"),
  /** A deferred completion of the server's own person changed state: the editor fetches a result as soon as it is there. */
  deferredChanged: new NotificationType<DeferredJobEvent>("acpRemote/deferred/changed"),
} as const;

/**
 * Sidecar → editor requests. The permission request is cancelled (JSON-RPC
 * `$/cancelRequest`) when the remote client answered first or the turn ended;
 * the editor then withdraws its prompt.
 */
export const ControlHostRequest = {
  requestPermission: new RequestType<PermissionInfo, PermissionAnswer, void>("acpRemote/permission/request"),
} as const;

/**
 * While attached with `host.fs`/`host.terminal`, the editor serves the agents'
 * host requests. They keep their ACP names, params and results, so the sidecar
 * forwards them as they are; the names are the SDK's (one source).
 */
export const HostMethod = {
  readTextFile: Acp.client.fs.readTextFile,
  writeTextFile: Acp.client.fs.writeTextFile,
  terminalCreate: Acp.client.terminal.create,
  terminalOutput: Acp.client.terminal.output,
  terminalWaitForExit: Acp.client.terminal.waitForExit,
  terminalKill: Acp.client.terminal.kill,
  terminalRelease: Acp.client.terminal.release,
} as const;
