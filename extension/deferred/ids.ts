// Ids of the deferred-completion commands and view; package.json's
// `contributes` declares the same ids.
export const DEFERRED_VIEW_ID = "acpRemote.deferred";

export const DeferredCommand = {
  /** "Submit deferred completion" (command palette). */
  submit: "acpRemote.submitDeferredCompletion",
  /** "Fetch result" on a job of the view. */
  fetchResult: "acpRemote.deferred.fetchResult",
  /** "Cancel" a pending job (DELETE on the server). */
  cancel: "acpRemote.deferred.cancel",
  /** "Remove from list". */
  forget: "acpRemote.deferred.forget",
  /** "Check pending jobs now" (view title). */
  refresh: "acpRemote.deferred.refresh",
} as const;

/** Command the submit flow offers when the server is not running (the extension's own). */
export const START_SERVER_COMMAND = "acpRemote.start";

/** Command that opens the permissions panel, where a job's permission request is answered (the extension's own). */
export const SHOW_PERMISSIONS_COMMAND = "acpRemote.showPermissions";

/** URI scheme of the read-only result documents: `acp-remote-deferred:/<request_id>/<title>.md`. */
export const DEFERRED_RESULT_SCHEME = "acp-remote-deferred";
