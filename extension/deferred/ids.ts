// Ids of what belongs to the deferred completions alone: their view (package.json's
// `contributes.views` declares the same id) and the scheme of their result
// documents. Their commands are in ../command-ids.ts with the others.
export const DEFERRED_VIEW_ID = "acpRemote.deferred";

/** URI scheme of the read-only result documents: `acp-remote-deferred:/<request_id>/<title>.md`. */
export const DEFERRED_RESULT_SCHEME = "acp-remote-deferred";
