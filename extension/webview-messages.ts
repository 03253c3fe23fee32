// Messages between the panels (extension side) and their webview scripts.
// Both sides import these types and constants; the webview bundle carries
// only the constants.
import type {
  RequestPermissionRequest,
  SessionConfigOption,
  SessionModeState,
  SessionNotification,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { OpenedSession, PermissionInfo } from "../protocol/control.ts";
import type { ConnectionState, PermissionSettlement } from "../web/session-view/api.ts";

export interface PermissionView {
  info: PermissionInfo;
  state: "pending" | "answered" | "withdrawn";
  chosenOptionId?: string;
}

export type PermissionsToWebview = { type: "permissions"; entries: PermissionView[]; serverRunning: boolean };
export type PermissionsFromWebview = { type: "answer"; permissionId: string; optionId: string } | { type: "ready" };

/**
 * The session tab (panels/session-panel.ts ↔ webview/session.ts) speaks the
 * session view's own calls: each message names one, so neither side spells a
 * kind. The draft never travels: the webview keeps it in its own state.
 */
export const ToSessionTab = {
  /** Draw the session anew: its journal and live state (after open, a restart of the server). */
  opened: "opened",
  update: "update",
  turnStarted: "turnStarted",
  turnEnded: "turnEnded",
  sessionState: "sessionState",
  permissionRequested: "permissionRequested",
  permissionSettled: "permissionSettled",
  connection: "connection",
  error: "error",
} as const;

export const FromSessionTab = {
  /** The script runs and can take messages. */
  ready: "ready",
  prompt: "prompt",
  cancel: "cancel",
  answerPermission: "answerPermission",
  setMode: "setMode",
  setConfigOption: "setConfigOption",
} as const;

export type SessionToWebview =
  | { type: typeof ToSessionTab.opened; session: OpenedSession }
  | { type: typeof ToSessionTab.update; notification: SessionNotification }
  | { type: typeof ToSessionTab.turnStarted }
  | { type: typeof ToSessionTab.turnEnded; stopReason: StopReason | "error"; message?: string }
  | { type: typeof ToSessionTab.sessionState; modes: SessionModeState | null; configOptions: SessionConfigOption[] }
  | { type: typeof ToSessionTab.permissionRequested; permissionId: string; request: RequestPermissionRequest }
  | { type: typeof ToSessionTab.permissionSettled; permissionId: string; how: PermissionSettlement }
  | { type: typeof ToSessionTab.connection; state: ConnectionState }
  | { type: typeof ToSessionTab.error; message: string };

export type SessionFromWebview =
  | { type: typeof FromSessionTab.ready }
  | { type: typeof FromSessionTab.prompt; text: string }
  | { type: typeof FromSessionTab.cancel }
  | { type: typeof FromSessionTab.answerPermission; permissionId: string; optionId: string | null }
  | { type: typeof FromSessionTab.setMode; modeId: string }
  | { type: typeof FromSessionTab.setConfigOption; configId: string; value: string | boolean };

/** What the tab keeps across a reload (vscode.getState/setState); the serializer reopens the session from it. */
export interface SessionTabState {
  sessionId: string;
  draft: string;
}

/** What the pairing panel's script (webview/pairing.ts) asks of the panel (pairing/pairing-panel.ts); the link itself is in the page. */
export type PairingFromWebview = { type: "copyLink" } | { type: "useLan" };
