// Messages between the panels (extension side) and their webview scripts.
// Both sides import these types; the webview bundle carries no runtime code of this file.
import type { SessionNotification } from "@agentclientprotocol/sdk";
import type { PermissionInfo, SessionInfo } from "../protocol/control.ts";

export interface PermissionView {
  info: PermissionInfo;
  state: "pending" | "answered" | "withdrawn";
  chosenOptionId?: string;
}

export type PermissionsToWebview = { type: "permissions"; entries: PermissionView[]; serverRunning: boolean };
export type PermissionsFromWebview = { type: "answer"; permissionId: string; optionId: string } | { type: "ready" };

export type SessionToWebview =
  | { type: "reset"; session: SessionInfo | undefined; sessionId: string; updates: SessionNotification[]; error?: string }
  | { type: "update"; notification: SessionNotification }
  | { type: "info"; session: SessionInfo | undefined };
export type SessionFromWebview = { type: "cancelTurn" } | { type: "closeSession" } | { type: "ready" };
