// Names and constants of the ACP remote transport (spec: acp-remote-transport.md).
// Method names are written once, here, so that no call site spells a
// protocol string.
import type { methods, PROTOCOL_VERSION as SDK_PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

/**
 * ACP's method names, as the SDK's `methods` has them: the type holds each
 * one to the SDK's own literal (and test/protocol/acp.test.ts the values).
 * Written here rather than imported, because importing them loads the SDK
 * and its schemas (zod) at run time: 5.9 MB of a server's heap that nothing
 * else uses, and every full collection marks.
 */
export const Acp = {
  agent: {
    initialize: "initialize",
    authenticate: "authenticate",
    logout: "logout",
    session: {
      new: "session/new",
      load: "session/load",
      list: "session/list",
      delete: "session/delete",
      resume: "session/resume",
      close: "session/close",
      setMode: "session/set_mode",
      setConfigOption: "session/set_config_option",
      prompt: "session/prompt",
      cancel: "session/cancel",
    },
  },
  client: {
    session: { requestPermission: "session/request_permission", update: "session/update" },
    fs: { writeTextFile: "fs/write_text_file", readTextFile: "fs/read_text_file" },
    terminal: { create: "terminal/create", output: "terminal/output", release: "terminal/release", waitForExit: "terminal/wait_for_exit", kill: "terminal/kill" },
    elicitation: { create: "elicitation/create", complete: "elicitation/complete" },
  },
  protocol: { cancelRequest: "$/cancel_request" },
} as const satisfies typeof methods;

/** The ACP protocol version this server speaks: the SDK's. */
export const PROTOCOL_VERSION = 1 satisfies typeof SDK_PROTOCOL_VERSION;

export const ACP_PATH = "/acp";

export const Header = {
  ConnectionId: "acp-connection-id",
  SessionId: "acp-session-id",
  ProtocolVersion: "acp-protocol-version",
  Authorization: "authorization",
  Origin: "origin",
  Accept: "accept",
  ContentType: "content-type",
  Cookie: "cookie",
  SetCookie: "set-cookie",
  WwwAuthenticate: "www-authenticate",
  RetryAfter: "retry-after",
  /** SSE resumption: the id of the last event a reader got, sent when it opens the stream again. */
  LastEventId: "last-event-id",
} as const;

export const MediaType = {
  Json: "application/json",
  EventStream: "text/event-stream",
} as const;

/** Name of the affinity cookie set on initialize and on the WebSocket 101. */
export const AFFINITY_COOKIE = "acp_affinity";

/** WebSocket subprotocol that carries the bearer token: `acp.bearer.<token>`. */
export const WS_TOKEN_SUBPROTOCOL_PREFIX = "acp.bearer.";
/** Query parameter that carries the bearer token for clients that cannot set headers. */
export const TOKEN_QUERY_PARAM = "access_token";

/** `Acp-Protocol-Version` values this server speaks (ACP protocol versions). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [String(PROTOCOL_VERSION)];

/**
 * Methods whose POST must carry `Acp-Session-Id` (spec: POST /acp, "session-scoped
 * requests"); their responses travel on the session stream.
 */
export const SESSION_SCOPED_METHODS: ReadonlySet<string> = new Set([
  Acp.agent.session.prompt,
  Acp.agent.session.cancel,
  Acp.agent.session.load,
  Acp.agent.session.setMode,
  Acp.agent.session.setConfigOption,
  Acp.agent.session.close,
  Acp.agent.session.resume,
  Acp.agent.session.delete,
  "session/set_model",
  "session/attach",
  "session/detach",
  "_acp-remote/session/history",
]);

/** Responses to these go on the connection stream even though they name a session. */
export const CONNECTION_STREAM_RESPONSES: ReadonlySet<string> = new Set([
  Acp.agent.session.new,
  Acp.agent.session.load,
  Acp.agent.session.resume,
  "session/attach",
]);

/**
 * What the server offers beyond the SDK's methods: the open ACP proposal for
 * multi-client session attach (offered as `sessionCapabilities.attach`), and
 * the `_meta` key under which results carry what ACP has no field for yet.
 */
export const AcpExt = {
  /** Join a session another client follows, without taking it from that client. */
  sessionAttach: "session/attach",
  /** Stop following a session; it goes on for the others. */
  sessionDetach: "session/detach",
  /** `session/update` variant sent to attached clients when a permission request was settled. */
  permissionResolved: "permission_resolved",
  /** `_meta` key of the server's own fields, e.g. `{ acpRemote: { running: true } }` on a session being resumed. */
  metaKey: "acpRemote",
  /**
   * Header of a node-to-node connection (several sidecars on one shared
   * store): the person the connection speaks for, in a claim signed with the
   * node secret of the nodes' configuration (sidecar/cluster/node-claim.ts),
   * for one node, once, within a short window. A request that carries it is
   * judged by the claim alone.
   */
  onBehalfOfHeader: "acp-remote-on-behalf-of",
  /**
   * Field under `_meta.acpRemote` of an initialize result over Streamable
   * HTTP: `true` when the server's SSE events carry ids and a stream opened
   * again with `Last-Event-ID` gets what followed that event.
   */
  resumableStreams: "resumableStreams",
  /**
   * Field under `_meta.acpRemote` of a `session/new` request: a key the
   * client makes once for each session it means to create and sends with
   * every try. A try whose answer was lost with the link, sent again with the
   * same key by the same person, answers the session the first one created
   * instead of making a second.
   */
  requestKey: "requestKey",
  /** Field under `_meta.acpRemote` of an initialize result: `true` when `session/new` honours `requestKey`. */
  sessionNewRequestKey: "sessionNewRequestKey",
  /**
   * Request of a paired device's client: keep this Web Push subscription
   * (`{ subscription: PushSubscriptionJSON }`) for the device; it replaces
   * the device's earlier one and goes when the device is revoked.
   */
  pushSubscribe: "_acp-remote/push/subscribe",
  /** Request of a paired device's client: forget the device's Web Push subscription. */
  pushUnsubscribe: "_acp-remote/push/unsubscribe",
  /**
   * Notification of a client that shows a session: `{ sessionId, visible }`,
   * whether a person can see it now (the page's visibility). Nothing
   * notifies the person of that session while one of their clients shows it.
   */
  visibility: "_acp-remote/visibility",
  /**
   * Field under `_meta.acpRemote` of an initialize result, present when the
   * server sends Web Push and the connection's credential is a paired
   * device (which may subscribe): `{ applicationServerKey }`, the server's
   * VAPID public key (base64url).
   */
  webPush: "webPush",
  /**
   * Field under `_meta.acpRemote`: in an initialize result, `true` when the
   * server tells a session's followers its state with `stateUpdate`; in the
   * client's `clientCapabilities._meta.acpRemote`, `true` to be told. A client
   * that does not ask gets none: the variant is not in ACP v1.
   */
  stateUpdates: "stateUpdates",
  /**
   * `session/update` variant of the ACP v2 draft that tells a session's state
   * (`SessionActivity`): sent to each follower that asked when it changes,
   * and once after session/load, session/resume or session/attach.
   */
  stateUpdate: "state_update",
  /**
   * Field under `_meta.acpRemote` of an initialize result: `true` when a
   * client may have a session's history in pages, the latest turns first
   * (`history` in session/load and session/attach, then `sessionHistory`).
   */
  historyPages: "historyPages",
  /**
   * Field under `_meta.acpRemote`: in a session/load or session/attach
   * request, `{ turns: n }` asks for the latest n turns of the history only;
   * in their result, `{ earlier: m }`: how many turns come before the ones
   * replayed (0: none).
   */
  history: "history",
  /**
   * Request of a client that follows a session: `{ sessionId, before, turns }`
   * asks for the `turns` turns before turn `before` (turns counted from the
   * oldest, 0 first; `before` is the `earlier` of the page after them), and
   * answers `{ updates, earlier }`.
   */
  sessionHistory: "_acp-remote/session/history",
} as const;

/**
 * What a session is doing, as the ACP v2 draft's `state_update` tells it: a
 * turn runs, a turn waits for the person (a permission request is open), or
 * nothing runs.
 */
export const SessionActivity = {
  Running: "running",
  RequiresAction: "requires_action",
  Idle: "idle",
} as const;
export type SessionActivity = (typeof SessionActivity)[keyof typeof SessionActivity];

/**
 * A session's state in `session/list` (`_meta.acpRemote.state`): its
 * activity, or `failed` for an idle session whose last turn ended in an
 * error (the agent failed or exited mid-turn).
 */
export const ListedSessionState = { ...SessionActivity, Failed: "failed" } as const;
export type ListedSessionState = (typeof ListedSessionState)[keyof typeof ListedSessionState];

/** How much history `session/attach` replays (the proposal's `historyPolicy`). */
export type AttachHistoryPolicy = "full" | "pending_only" | "none";
