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
