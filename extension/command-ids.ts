// The ids of the extension's commands, each written here once: the command
// tables register them and the views, menus, links and panels run them by
// these names. package.json's `contributes.commands` declares the same ids as
// `Command` (test/extension/command-ids.test.ts holds the two together).
// Nothing here imports VS Code, so plain Node reads it too.

export const Command = {
  /** "Start Server" (or says where it already runs). */
  start: "acpRemote.start",
  /** "Stop Server"; asks first while remote clients are connected, unless given `{ confirm: false }`. */
  stop: "acpRemote.stop",
  /** "Restart Server"; asks as Stop does. */
  restart: "acpRemote.restart",
  /** "Copy Connection URL": the server's /acp address. */
  copyUrl: "acpRemote.copyUrl",
  /** "Show Access Token" in an input box, never in a log or a notification. */
  showToken: "acpRemote.showToken",
  /** "Copy Access Token". */
  copyToken: "acpRemote.copyToken",
  /** "Rotate Access Token": clients with the old one are refused from then on. */
  rotateToken: "acpRemote.rotateToken",
  /** "Connect a Device": pairs one and opens the panel with its link and QR code. */
  connectDevice: "acpRemote.connectDevice",
  /** "Revoke Device": a tree node, a device id, or none (then the person picks). */
  revokeDevice: "acpRemote.revokeDevice",
  /** "Set Upstream Provider API Key": the OpenAI-compatible provider's, kept in the secret storage. */
  setUpstreamKey: "acpRemote.setUpstreamKey",
  /** "Open Sessions Panel": picks a session and opens its tab. */
  openSessions: "acpRemote.openSessions",
  /** Opens the tab of the session whose id it is given (the Overview's session items). */
  openSession: "acpRemote.openSession",
  /** "Add Agent…" from the ACP Registry to `acpRemote.agents`. */
  addAgent: "acpRemote.addAgent",
  /** "Authenticate Agent…": runs an agent's sign-in. */
  authenticateAgent: "acpRemote.authenticateAgent",
  /** "New Session" on a picked agent, or the one it is given. */
  newSession: "acpRemote.newSession",
  /** "Close Session": the given one or the active tab's, after asking. */
  closeSession: "acpRemote.closeSession",
  /** "Show Pending Permissions": the panel of permission requests. */
  showPermissions: "acpRemote.showPermissions",
  /** Answers a permission request with (permissionId, optionId): the notification's option links. */
  answerPermission: "acpRemote.answerPermission",
  /** "Allow" the permission request of the change in the diff editor in front. */
  diffAllow: "acpRemote.diff.allow",
  /** "Reject" the permission request of the change in the diff editor in front. */
  diffReject: "acpRemote.diff.reject",
  /** "Answer the Permission Request…": every option the agent offered for the change in the diff editor in front. */
  diffAnswer: "acpRemote.diff.answer",
  /** "Show Log": the output channel. */
  showLog: "acpRemote.showLog",
  /** "Show Overview": focuses the Overview in the activity bar. */
  focusView: "acpRemote.focusView",
  /** "Show Server Actions": the status item's menu of what can be done in the server's state. */
  showStatusMenu: "acpRemote.showStatusMenu",
  /** "Get Started": opens the walkthrough. */
  openWalkthrough: "acpRemote.openWalkthrough",
  /** "Submit deferred completion" (command palette). */
  submitDeferredCompletion: "acpRemote.submitDeferredCompletion",
  /** "Fetch result" on a job of the deferred view. */
  deferredFetchResult: "acpRemote.deferred.fetchResult",
  /** "Cancel deferred completion": a pending job (DELETE on the server). */
  deferredCancel: "acpRemote.deferred.cancel",
  /** "Remove from list" a job of the deferred view. */
  deferredForget: "acpRemote.deferred.forget",
  /** "Check pending deferred completions" (the deferred view's title). */
  deferredRefresh: "acpRemote.deferred.refresh",
} as const;

/** Commands registered but not declared in package.json: only the extension's own panels run them. */
export const InternalCommand = {
  /** Opens a proposed change in the diff editor; its argument is a DiffToOpen. */
  openDiff: "acpRemote.openDiff",
} as const;

/** A command the extension contributes. */
export type CommandId = (typeof Command)[keyof typeof Command];
