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
import type { PermissionResolution } from "../../protocol/permission-outcome.ts";

export type { PermissionResolution } from "../../protocol/permission-outcome.ts";

/** Id of a pending permission request (the JSON-RPC id the host answers). */
export type PermissionRequestId = string | number;

/**
 * How a permission request stopped being open: who settled it with which
 * option, or why nobody did (protocol/permission-outcome.ts), shown as "Allowed
 * on Pixel 8", "Withdrawn: the turn was stopped". The bare words are what a
 * host that knows no more can say.
 */
export type PermissionSettlement = PermissionResolution | "answered here" | "answered elsewhere" | "withdrawn";

/** A change a tool call proposes to one file (ACP's diff content): the text before (null: a new file) and after. */
export interface ProposedDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/** State of the host's link to the agent, shown as a banner when not connected. */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "disconnected";

/** Why the session cannot take a prompt now, and what the person can do about it. */
export interface Unavailable {
  /** One line: "The ACP Remote server is stopped." */
  reason: string;
  /** A button beside the reason ("Start Server"). */
  action?: { label: string; run(): void };
}

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
  /**
   * Open the file at the line (a tool call's location, a diff's path).
   * Optional: the editor has it; without it paths show as text (the phone).
   */
  openFile?(path: string, line?: number): void;
  /**
   * Show the proposed change in a diff editor; `requestId` when it is the
   * change an open permission request asks about (its answers are offered
   * there too). Optional: without it no Open Diff button shows.
   */
  openDiff?(diff: ProposedDiff, requestId?: PermissionRequestId): void;
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
  /** The request is no longer open: its buttons go and the outcome shows (told again with more detail, the outcome is told anew). */
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
  /**
   * The session cannot take a prompt (its server stopped, it was closed, its
   * agent exited): Send does nothing and the reason shows by the box, with
   * its action; what was typed stays. `undefined` when it can again.
   */
  setUnavailable(unavailable: Unavailable | undefined): void;
  /** The session's name (protocol/names.ts): the heading until the agent gives a title. */
  setName(name: string): void;
  /** Puts a draft the host kept back in the composer (reported through draftChanged like typing). */
  setDraft(text: string): void;
  /** Whether turns come before those replayed (a paged history): the view offers them, through the host's loadEarlier. */
  setEarlier(more: boolean): void;
  /** Remove the view and everything it holds (listeners, timers). */
  dispose(): void;
}
