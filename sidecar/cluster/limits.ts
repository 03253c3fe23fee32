// Limits of several nodes on one shared store.

/** How often a node says it is alive, in milliseconds. */
export const DEFAULT_NODE_HEARTBEAT_MS = 1_000;
/**
 * How long a node counts as alive after its last heartbeat, in milliseconds:
 * a killed node's sessions and jobs are taken over this long after it died.
 */
export const DEFAULT_NODE_TTL_MS = 3_000;
/** How often a node looks for deferred jobs that other nodes queued or left behind, in milliseconds. */
export const DEFAULT_CLUSTER_JOB_SCAN_MS = 1_000;
/** How long opening a link to another node (WebSocket and initialize) may take, in milliseconds. */
export const DEFAULT_NODE_LINK_OPEN_MS = 5_000;
