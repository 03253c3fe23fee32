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
/**
 * A link to another node is pinged this often, in milliseconds: a peer whose
 * process hangs, or a network that drops packets without a reset, shows only
 * as pings that go unanswered (the client does the same, DEFAULT_CLIENT_PING_MS).
 */
export const DEFAULT_NODE_LINK_PING_MS = 3_000;
/**
 * A ping of a node link unanswered for this long ends the link, in
 * milliseconds: the client's requests there get the "node gone" error, and the
 * session is looked up again (as long as a dead node's heartbeat, DEFAULT_NODE_TTL_MS).
 */
export const DEFAULT_NODE_LINK_PING_TIMEOUT_MS = 3_000;
/**
 * How far the time of a node's claim may be from the time of the node that
 * checks it, either way, in milliseconds: a claim is good once, and only this
 * long (the nodes' clocks must agree within it).
 */
export const DEFAULT_NODE_CLAIM_WINDOW_MS = 30_000;
/** Nonces of accepted claims remembered to refuse a second use, at most; the oldest go first, in claims. */
export const DEFAULT_NODE_CLAIM_NONCES_KEPT = 100_000;
/** Longest claim header read, in characters. */
export const DEFAULT_NODE_CLAIM_MAX_CHARS = 8 * 1024;
/** Shortest node secret accepted (`openssl rand -base64 32` makes 44), in characters. */
export const DEFAULT_NODE_SECRET_MIN_CHARS = 32;
