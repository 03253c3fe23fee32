// The session view's contract with its two hosts: the VS Code webview (fed by
// the control protocol) and the web client (fed by /acp). The view draws one
// ACP session from `session/update` notifications alone, so a replayed
// session and a live turn look the same; the host owns the connection and
// feeds the view, the view asks the host for what the user does.
import type {
  RequestPermissionRequest,
  SessionConfigOption,
  SessionModeState,
  SessionNotification,
  StopReason,
} from "@agentclientprotocol/sdk";

/** Id of a pending permission request (the JSON-RPC id the host answers). */
export type PermissionRequestId = string | number;

/** How a permission request stopped being open. */
export type PermissionSettlement = "answered here" | "answered elsewhere" | "withdrawn";

/** State of the host's link to the agent, shown as a banner when not connected. */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "disconnected";

/** What the view asks of its host. */
export interface SessionViewHost {
  /**
   * Send a prompt. The view shows what the agent's `session/update`s say,
   * so the host feeds the prompt back as `user_message_chunk` (the journal does).
   */
  prompt(text: string): void;
  /** Cancel the running turn (`session/cancel`). */
  cancel(): void;
  /** Answer a permission request with one of its options; `null` answers it as cancelled. */
  answerPermission(requestId: PermissionRequestId, optionId: string | null): void;
  /** `session/set_mode`. */
  setMode(modeId: string): void;
  /** `session/set_config_option`: a select's value id, or a boolean option's value. */
  setConfigOption(configId: string, value: string | boolean): void;
  /**
   * The composer's text changed (typed, sent, picked from the commands, or set
   * by setDraft). Optional: a host that keeps drafts across reloads stores it.
   */
  draftChanged?(text: string): void;
  /**
   * The turns before those the view shows, for a host whose replay brought
   * the latest ones only (the view asks once setEarlier said there are some).
   * Optional: a host without pages of history has it whole.
   */
  loadEarlier?(): Promise<EarlierPage>;
}

/** Earlier turns of a paged history, oldest first, and whether more come before them. */
export interface EarlierPage {
  notifications: SessionNotification[];
  more: boolean;
}

/** What the host feeds the view. */
export interface SessionView {
  /** One `session/update` notification, live or replayed. */
  update(notification: SessionNotification): void;
  /** The agent asks for permission; the request shows inline with the agent's options. */
  permissionRequested(requestId: PermissionRequestId, request: RequestPermissionRequest): void;
  /** The request is no longer open: its buttons go and the outcome shows. */
  permissionSettled(requestId: PermissionRequestId, how: PermissionSettlement): void;
  /**
   * Brings the first open permission request into view and focuses it (a
   * page opened on a session that waits for an answer); false when none is open.
   */
  revealPermission(): boolean;
  /** A prompt turn began (from this view or another client). */
  turnStarted(): void;
  /** The turn ended with the agent's stop reason. */
  turnEnded(stopReason: StopReason): void;
  /** The turn ended with an error (the prompt failed): the error shows, and the plan stops where the turn left it. */
  turnFailed(message: string): void;
  /** Show an error in the transcript. */
  error(message: string): void;
  /** Modes offered by `session/new` or `session/load`; `null` hides the selector. */
  setModes(modes: SessionModeState | null): void;
  /** Config options offered by `session/new` or `session/load`. */
  setConfigOptions(options: SessionConfigOption[]): void;
  /** Whether a turn is running, when the host learns it otherwise than by turnStarted/turnEnded. */
  setBusy(busy: boolean): void;
  /** State of the host's connection. */
  setConnection(state: ConnectionState): void;
  /** Puts a draft the host kept back in the composer (reported through draftChanged like typing). */
  setDraft(text: string): void;
  /** Whether turns come before those replayed (a paged history): the view offers them, through the host's loadEarlier. */
  setEarlier(more: boolean): void;
  /** Remove the view and everything it holds (listeners, timers). */
  dispose(): void;
}
