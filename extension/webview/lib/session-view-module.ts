// The part of the session view (web/session-view/api.ts) the session tab
// uses. The tab loads that bundle as a file (dist/web/session-view.js) at run
// time rather than importing it: the extension imports none of web/, so these
// shapes are restated here, and the extension suite's session tab cases check
// them against the real bundle.
import type {
  RequestPermissionRequest,
  SessionConfigOption,
  SessionModeState,
  SessionNotification,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { TabConnection, TabPermissionSettlement } from "../../webview-messages.ts";

export interface SessionViewHost {
  prompt(text: string): void;
  cancel(): void;
  answerPermission(requestId: string | number, optionId: string | null): void;
  setMode(modeId: string): void;
  setConfigOption(configId: string, value: string | boolean): void;
  draftChanged(text: string): void;
}

export interface SessionView {
  update(notification: SessionNotification): void;
  permissionRequested(requestId: string, request: RequestPermissionRequest): void;
  permissionSettled(requestId: string, how: TabPermissionSettlement): void;
  turnStarted(): void;
  turnEnded(stopReason: StopReason): void;
  error(message: string): void;
  setModes(modes: SessionModeState | null): void;
  setConfigOptions(options: SessionConfigOption[]): void;
  setBusy(busy: boolean): void;
  setConnection(state: TabConnection): void;
  setDraft(text: string): void;
  dispose(): void;
}

export interface SessionViewModule {
  createSessionView(root: HTMLElement, host: SessionViewHost): SessionView;
}
