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
/** How long a stopping sidecar gets to answer shutdown before its process is killed, in milliseconds. */
export const DEFAULT_SIDECAR_STOP_TIMEOUT_MS = 10_000;
