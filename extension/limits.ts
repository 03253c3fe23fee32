// Every limit of the extension itself, with its unit (the sidecar's are in sidecar/limits.ts).

/** A crashed sidecar is restarted at most this many times within the window below; one more crash and it stays down. */
export const DEFAULT_SIDECAR_MAX_RESTARTS = 4;
/** The sliding window the restart count above applies to, in milliseconds. */
export const DEFAULT_SIDECAR_RESTART_WINDOW_MS = 3 * 60_000;
/** Permission entries (answered or withdrawn) the editor keeps showing after they settle. */
export const DEFAULT_EDITOR_SETTLED_PERMISSIONS = 20;
/** Tool calls the editor remembers (from session updates) to show a permission request's details, in tool calls. */
export const DEFAULT_EDITOR_KNOWN_TOOL_CALLS = 1_000;
/** How often the Overview redraws while devices are paired, so "used 5 min ago" keeps its age, in milliseconds. */
export const DEFAULT_DEVICE_AGE_REDRAW_MS = 60_000;
/** Stop Server's question names this many of the connected clients, then says how many more, in clients. */
export const DEFAULT_STOP_QUESTION_NAMES = 5;
/** How long a stopping sidecar gets to answer shutdown before its process is killed, in milliseconds. */
export const DEFAULT_SIDECAR_STOP_TIMEOUT_MS = 10_000;
/** Add Agent: time a refresh of the agent list from the ACP Registry may take before the cached or shipped list is shown, in milliseconds. */
export const DEFAULT_REGISTRY_FETCH_TIMEOUT_MS = 3_000;
/** Add Agent: largest agent list accepted from the registry, in bytes. */
export const DEFAULT_REGISTRY_MAX_BYTES = 4 * 1024 * 1024;
/** Add Agent: a cached agent list younger than this is shown without asking the registry again, in milliseconds. */
export const DEFAULT_REGISTRY_REFRESH_AFTER_MS = 60 * 60_000;
/** Deferred completions: the job states the sidecar announced that the editor keeps (the newest), in jobs. */
export const DEFAULT_EDITOR_DEFERRED_STATES_KEPT = 1_000;
/** Proposed changes whose texts the diff editor's documents keep (the newest; an older one opens empty), in changes. */
export const DEFAULT_DIFF_REVIEWS_KEPT = 100;
