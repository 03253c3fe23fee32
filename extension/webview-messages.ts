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
import type { PermissionResolution } from "../protocol/permission-outcome.ts";
import type { ConnectionState, PermissionSettlement, ProposedDiff } from "../web/session-view/api.ts";

export interface PermissionView {
  info: PermissionInfo;
  state: "pending" | "answered" | "withdrawn";
  chosenOptionId?: string;
  /** How it was settled and by whom, once settled. */
  resolution?: PermissionResolution;
}

export type PermissionsToWebview = { type: "permissions"; entries: PermissionView[]; serverRunning: boolean };
export type PermissionsFromWebview =
  | { type: "answer"; permissionId: string; optionId: string }
  | { type: "ready" }
  /** Show the request's proposed change to `path` in the diff editor. */
  | { type: "openDiff"; permissionId: string; path: string };

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
  /** Why the session takes no prompt now (server stopped, session closed, agent exited), or null when it does. */
  unavailable: "unavailable",
  /** The session's name, and what it is made of (kept in the tab's state so that a reload shows it while the server is down). */
  named: "named",
  /** A prompt the server refused (no turn began): its text goes back in the box when the box is empty. */
  promptRefused: "promptRefused",
} as const;

export const FromSessionTab = {
  /** The script runs and can take messages. */
  ready: "ready",
  prompt: "prompt",
  cancel: "cancel",
  answerPermission: "answerPermission",
  setMode: "setMode",
  setConfigOption: "setConfigOption",
  /** The button by the reason the session takes no prompt (Start Server, Restart Server). */
  unavailableAction: "unavailableAction",
  /** A path in a tool card: the file at the line. */
  openFile: "openFile",
  /** A proposed change, in the diff editor; with the permission request it belongs to, whose answers show there. */
  openDiff: "openDiff",
} as const;

/** What the tab's button does when the session takes no prompt. */
export type TabAction = "startServer" | "restartServer";

/** Why the tab's session takes no prompt now, and the button that helps. */
export interface TabUnavailable {
  reason: string;
  action?: TabAction;
}

export type SessionToWebview =
  | { type: typeof ToSessionTab.opened; session: OpenedSession }
  | { type: typeof ToSessionTab.update; notification: SessionNotification }
  | { type: typeof ToSessionTab.turnStarted }
  | { type: typeof ToSessionTab.turnEnded; stopReason: StopReason | "error"; message?: string }
  | { type: typeof ToSessionTab.sessionState; modes: SessionModeState | null; configOptions: SessionConfigOption[] }
  | { type: typeof ToSessionTab.permissionRequested; permissionId: string; request: RequestPermissionRequest }
  | { type: typeof ToSessionTab.permissionSettled; permissionId: string; how: PermissionSettlement }
  | { type: typeof ToSessionTab.connection; state: ConnectionState }
  | { type: typeof ToSessionTab.error; message: string }
  | { type: typeof ToSessionTab.unavailable; unavailable: TabUnavailable | null }
  | { type: typeof ToSessionTab.named; name: string; agent: string; title?: string }
  | { type: typeof ToSessionTab.promptRefused; text: string };

export type SessionFromWebview =
  | { type: typeof FromSessionTab.ready }
  | { type: typeof FromSessionTab.prompt; text: string }
  | { type: typeof FromSessionTab.cancel }
  | { type: typeof FromSessionTab.answerPermission; permissionId: string; optionId: string | null }
  | { type: typeof FromSessionTab.setMode; modeId: string }
  | { type: typeof FromSessionTab.setConfigOption; configId: string; value: string | boolean }
  | { type: typeof FromSessionTab.unavailableAction; action: TabAction }
  | { type: typeof FromSessionTab.openFile; path: string; line?: number }
  | { type: typeof FromSessionTab.openDiff; diff: ProposedDiff; permissionId?: string };

/** What the tab keeps across a reload (vscode.getState/setState); the serializer reopens the session from it. */
export interface SessionTabState {
  sessionId: string;
  draft: string;
  /** The session's agent and title as last known: the tab's name after a reload, before the server runs. */
  agent?: string;
  title?: string;
}

/** What the pairing panel's script (webview/pairing.ts) asks of the panel (pairing/pairing-panel.ts); the link itself is in the page. */
export type PairingFromWebview = { type: "copyLink" } | { type: "useLan" };
