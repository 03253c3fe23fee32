// The names the web client puts on the wire. They are spelled here instead of
// imported, because protocol/acp.ts pulls the SDK's schemas into the bundle;
// each one is typed as the SDK's or protocol/'s own constant, so a rename
// there fails the type check here.
import type { methods, PROTOCOL_VERSION as SdkProtocolVersion } from "@agentclientprotocol/sdk";
import type {
  ACP_PATH as AcpPath,
  AcpExt,
  Header as AcpHeader,
  ListedSessionState,
  WS_TOKEN_SUBPROTOCOL_PREFIX as SubprotocolPrefix,
} from "../../protocol/acp.ts";

type M = typeof methods;

export const Method: {
  initialize: M["agent"]["initialize"];
  sessionNew: M["agent"]["session"]["new"];
  sessionLoad: M["agent"]["session"]["load"];
  sessionList: M["agent"]["session"]["list"];
  sessionPrompt: M["agent"]["session"]["prompt"];
  sessionCancel: M["agent"]["session"]["cancel"];
  sessionSetMode: M["agent"]["session"]["setMode"];
  sessionSetConfigOption: M["agent"]["session"]["setConfigOption"];
  sessionUpdate: M["client"]["session"]["update"];
  requestPermission: M["client"]["session"]["requestPermission"];
  cancelRequest: M["protocol"]["cancelRequest"];
  sessionAttach: (typeof AcpExt)["sessionAttach"];
  pushSubscribe: (typeof AcpExt)["pushSubscribe"];
  pushUnsubscribe: (typeof AcpExt)["pushUnsubscribe"];
  visibility: (typeof AcpExt)["visibility"];
  sessionHistory: (typeof AcpExt)["sessionHistory"];
} = {
  initialize: "initialize",
  sessionNew: "session/new",
  sessionLoad: "session/load",
  sessionList: "session/list",
  sessionPrompt: "session/prompt",
  sessionCancel: "session/cancel",
  sessionSetMode: "session/set_mode",
  sessionSetConfigOption: "session/set_config_option",
  sessionUpdate: "session/update",
  requestPermission: "session/request_permission",
  cancelRequest: "$/cancel_request",
  sessionAttach: "session/attach",
  pushSubscribe: "_acp-remote/push/subscribe",
  pushUnsubscribe: "_acp-remote/push/unsubscribe",
  visibility: "_acp-remote/visibility",
  sessionHistory: "_acp-remote/session/history",
};

export const ACP_PATH: typeof AcpPath = "/acp";

export const Header: {
  ConnectionId: (typeof AcpHeader)["ConnectionId"];
  SessionId: (typeof AcpHeader)["SessionId"];
  LastEventId: (typeof AcpHeader)["LastEventId"];
} = { ConnectionId: "acp-connection-id", SessionId: "acp-session-id", LastEventId: "last-event-id" };

/** The field under `_meta.acpRemote` of the initialize result that offers resuming a cut GET stream with Last-Event-ID. */
export const RESUMABLE_STREAMS: (typeof AcpExt)["resumableStreams"] = "resumableStreams";

/** The WebSocket subprotocol that carries the token: browsers cannot set headers on a WebSocket. */
export const WS_TOKEN_SUBPROTOCOL_PREFIX: typeof SubprotocolPrefix = "acp.bearer.";

/** The `_meta` key of the server's own fields, e.g. `{ acpRemote: { running: true } }` in session/list and session/load. */
export const META_KEY: (typeof AcpExt)["metaKey"] = "acpRemote";

/** The field under `_meta.acpRemote` of session/new that names the session the page means to create, the same on every try. */
export const REQUEST_KEY: (typeof AcpExt)["requestKey"] = "requestKey";

/** The `session/update` variant of the attach proposal telling that a permission request was answered. */
export const PERMISSION_RESOLVED: (typeof AcpExt)["permissionResolved"] = "permission_resolved";

/** The field under `_meta.acpRemote` of initialize that asks to be told the sessions' state (and, in its result, offers it). */
export const STATE_UPDATES: (typeof AcpExt)["stateUpdates"] = "stateUpdates";

/** The field under `_meta.acpRemote` of initialize that says the server gives a session's history in pages, the latest turns first. */
export const HISTORY_PAGES: (typeof AcpExt)["historyPages"] = "historyPages";

/** The field under `_meta.acpRemote` of session/load and session/attach: `{ turns }` asked, `{ earlier }` answered. */
export const HISTORY: (typeof AcpExt)["history"] = "history";

/** The `session/update` variant of the ACP v2 draft that tells a session's state: running, requires_action or idle. */
export const STATE_UPDATE: (typeof AcpExt)["stateUpdate"] = "state_update";

/** A session's states, as `state_update` and session/list's `_meta.acpRemote.state` tell them. */
export const SessionState: typeof ListedSessionState = { Running: "running", RequiresAction: "requires_action", Idle: "idle", Failed: "failed" };

/** The ACP protocol version this client speaks. */
export const PROTOCOL_VERSION: typeof SdkProtocolVersion = 1;

/** The field under `_meta.acpRemote` of initialize that offers a paired device Web Push: `{ applicationServerKey }`. */
export const WEB_PUSH: (typeof AcpExt)["webPush"] = "webPush";
