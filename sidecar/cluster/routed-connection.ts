// One client connection on a node of several (shared store). Its sessions
// run either here, through the local hub connection, or on the live node that
// is their home, through a NodeLink to that node: the client cannot tell. A
// session unknown here is looked up in the store's directory when the client
// first names it; a live home elsewhere gets the message, a dead (or no) home
// leaves it to the local hub, which takes the session over.
//
// Messages are handled in the order they came: a directory lookup holds the
// messages behind it until it is settled.
import { Acp } from "../../protocol/acp.ts";
import {
  ErrorCode,
  errorResponse,
  idKey,
  isNotification,
  isRecord,
  isRequest,
  isResponse,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  paramsSessionId,
} from "../../protocol/jsonrpc.ts";
import type { ClientLink, ConnectOptions, HubConnection, SessionAccess } from "../hub/types.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { NodeLink } from "./node-link.ts";
import type { NodePresence } from "./node-presence.ts";

export interface ClusterDeps {
  store: SharedStore;
  presence: NodePresence;
  clusterKey: () => Promise<string>;
  log: (line: string) => void;
}

/** Prefix of the ids this node gives the requests another node sends its client: `node~<link>~<id>`. */
const REMOTE_ID_PREFIX = "node~";

interface Remote {
  node: string;
  link: Promise<NodeLink>;
  /** Client requests sent over the link and not answered yet: id → what the transport needs to route the answer. */
  pending: Map<string, { id: JsonRpcId; method: string; sessionId: string | undefined }>;
  /** The other node's requests to the client, by the id the client sees. */
  theirs: Map<string, JsonRpcId>;
  index: number;
}

export class RoutedConnection implements HubConnection {
  readonly #local: HubConnection;
  readonly #client: ClientLink;
  readonly #options: ConnectOptions;
  readonly #deps: ClusterDeps;
  /** Sessions that run on another node, by session id. */
  readonly #sessions = new Map<string, Remote>();
  /** Sessions of this person the store knows, not run here (yet): loadable. */
  readonly #elsewhere = new Set<string>();
  /** One link per other node. */
  readonly #remotes = new Map<string, Remote>();
  #initialize: unknown;
  #order: Promise<void> = Promise.resolve();
  #nextRemote = 0;
  #open = true;

  constructor(local: HubConnection, client: ClientLink, options: ConnectOptions, deps: ClusterDeps) {
    this.#local = local;
    this.#client = client;
    this.#options = options;
    this.#deps = deps;
  }

  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    this.#initialize = request.params;
    return this.#local.initialize(request);
  }

  sessionAccess(sessionId: string): SessionAccess {
    if (this.#sessions.has(sessionId)) return "attached";
    const local = this.#local.sessionAccess(sessionId);
    return local === "unknown" && this.#elsewhere.has(sessionId) ? "loadable" : local;
  }

  /** A session of this person that the store knows and this node does not run yet: loadable here. */
  async resolveSession(sessionId: string): Promise<void> {
    if (this.#sessions.has(sessionId) || this.#elsewhere.has(sessionId) || this.#local.sessionAccess(sessionId) !== "unknown") return;
    const record = await this.#deps.store.sessions.get(sessionId);
    if (record !== undefined && record.ownerId === this.#client.principal.id) this.#elsewhere.add(sessionId);
  }

  receive(message: JsonRpcMessage): void {
    this.#then(() => this.#route(message));
  }

  // Both wait for the messages before them: a client's last request is
  // handled before its connection goes.
  detach(): void {
    this.#then(() => {
      this.#end();
      this.#local.detach();
    });
  }

  close(): void {
    this.#then(async () => {
      // The sessions that run elsewhere end there too, as they would here;
      // the other node handles each session/close before the link's close.
      for (const [sessionId, remote] of this.#sessions) {
        const link = await remote.link.catch(() => undefined);
        link?.send({ jsonrpc: "2.0", id: `acp-remote-close-${sessionId}`, method: Acp.agent.session.close, params: { sessionId } });
      }
      this.#end();
      this.#local.close();
    });
  }

  #then(step: () => void | Promise<void>): void {
    this.#order = this.#order.then(step).catch((error: unknown) => {
      this.#deps.log(`acp-remote: a message could not be routed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /** Closing a link detaches its connection on the other node: the sessions there go on, loadable. */
  #end(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const remote of this.#remotes.values()) void remote.link.then((link) => link.close(), () => undefined);
  }

  async #route(message: JsonRpcMessage): Promise<void> {
    if (!this.#open) return;
    if (isResponse(message)) return this.#answer(message);
    if (isNotification(message) && message.method === Acp.protocol.cancelRequest) return this.#cancel(message);
    const sessionId = paramsSessionId(message);
    if (sessionId === undefined) return this.#local.receive(message);
    const remote = this.#sessions.get(sessionId) ?? (await this.#lookUp(sessionId));
    if (remote === undefined) return this.#local.receive(message);
    const request = isRequest(message) ? message : undefined;
    if (request) remote.pending.set(idKey(request.id), { id: request.id, method: request.method, sessionId });
    try {
      (await remote.link).send(message);
    } catch (error) {
      this.#linkFailed(remote, error);
      if (request) this.#client.send(gone(request.id, sessionId, remote.node), sessionId, request.method);
    }
  }

  /** The session's home, when it is a live node other than this one: the link to it. */
  async #lookUp(sessionId: string): Promise<Remote | undefined> {
    if (this.#local.sessionAccess(sessionId) !== "unknown") return undefined;
    const me = this.#deps.presence.nodeId;
    const home = await this.#deps.store.sessions.home(sessionId);
    if (home === undefined || home === me) return undefined;
    const url = await this.#deps.presence.nodeUrl(home);
    // No heartbeat: the node is gone, and the local hub takes the session over.
    if (url === undefined || url === "") return undefined;
    let remote = this.#remotes.get(home);
    if (remote === undefined) {
      remote = this.#openRemote(home, url);
      this.#remotes.set(home, remote);
    }
    try {
      await remote.link;
    } catch (error) {
      this.#linkFailed(remote, error);
      // It has a heartbeat but does not answer: it is dying. Its key runs out within the TTL; then the session is taken over.
      await this.#untilGone(home);
      return undefined;
    }
    this.#sessions.set(sessionId, remote);
    return remote;
  }

  #openRemote(node: string, url: string): Remote {
    let remote: Remote | undefined;
    const link = this.#deps.clusterKey().then((clusterKey) =>
      NodeLink.open({
        url,
        clusterKey,
        principal: this.#client.principal,
        ...(this.#options.agent === undefined ? {} : { agent: this.#options.agent }),
        initialize: this.#initialize,
        onMessage: (message) => this.#fromRemote(remote as Remote, message),
        onClose: (reason) => this.#linkFailed(remote as Remote, new Error(reason)),
      }),
    );
    // A failed open is handled where the link is awaited.
    link.catch(() => undefined);
    remote = { node, link, pending: new Map(), theirs: new Map(), index: ++this.#nextRemote };
    return remote;
  }

  /** A message of the other node for the client: answers keep their ids; its requests get ids of this connection. */
  #fromRemote(remote: Remote, message: JsonRpcMessage): void {
    if (!this.#open) return;
    if (isResponse(message)) {
      const key = idKey(message.id);
      const request = remote.pending.get(key);
      if (request === undefined) return;
      remote.pending.delete(key);
      this.#client.send(message, request.sessionId, request.method);
      return;
    }
    const sessionId = paramsSessionId(message);
    if (!isRequest(message)) {
      if (message.method === Acp.protocol.cancelRequest && isRecord(message.params)) {
        // The other node withdrew one of its requests: the client knows it by this connection's id.
        const theirs = message.params["requestId"];
        const ours = [...remote.theirs].find(([, id]) => id === theirs)?.[0];
        if (ours === undefined) return;
        remote.theirs.delete(ours);
        this.#client.send({ ...message, params: { ...message.params, requestId: ours } }, sessionId);
        return;
      }
      this.#client.send(message, sessionId);
      return;
    }
    const ours = `${REMOTE_ID_PREFIX}${remote.index}~${idKey(message.id)}`;
    remote.theirs.set(ours, message.id);
    this.#client.send({ ...message, id: ours }, sessionId);
  }

  /** The client's answer to a request: to the node that asked, or to the local hub. */
  async #answer(response: JsonRpcResponse): Promise<void> {
    if (typeof response.id === "string" && response.id.startsWith(REMOTE_ID_PREFIX)) {
      for (const remote of this.#remotes.values()) {
        const theirs = remote.theirs.get(response.id);
        if (theirs === undefined) continue;
        remote.theirs.delete(response.id);
        (await remote.link).send({ ...response, id: theirs });
        return;
      }
      return;
    }
    this.#local.receive(response);
  }

  /** The client withdrew one of its requests: it goes where the request went. */
  async #cancel(message: JsonRpcMessage): Promise<void> {
    const requestId = isRecord((message as { params?: unknown }).params) ? ((message as { params: Record<string, unknown> }).params["requestId"] as JsonRpcId) : undefined;
    if (requestId !== undefined) {
      for (const remote of this.#remotes.values()) {
        if (!remote.pending.has(idKey(requestId))) continue;
        (await remote.link).send(message);
        return;
      }
    }
    this.#local.receive(message);
  }

  /**
   * The link to a node broke: the client's requests there get an error, and
   * its sessions there are looked up again when next named (taken over here
   * once the node's heartbeat runs out).
   */
  #linkFailed(remote: Remote, error: unknown): void {
    if (this.#remotes.get(remote.node) !== remote) return;
    this.#remotes.delete(remote.node);
    for (const [sessionId, r] of this.#sessions) if (r === remote) this.#sessions.delete(sessionId);
    this.#deps.log(`acp-remote: link to node ${remote.node} lost: ${error instanceof Error ? error.message : String(error)}`);
    if (!this.#open) return;
    for (const request of remote.pending.values()) this.#client.send(gone(request.id, request.sessionId, remote.node), request.sessionId, request.method);
    remote.pending.clear();
    remote.theirs.clear();
  }

  /** Waits until `node` has no heartbeat any more, at most a little longer than its TTL. */
  async #untilGone(node: string): Promise<void> {
    const deadline = Date.now() + this.#deps.presence.ttlMs + 1_000;
    while (Date.now() < deadline && (await this.#deps.presence.liveNodes()).has(node)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function gone(id: JsonRpcId, sessionId: string | undefined, node: string): JsonRpcResponse {
  return errorResponse(id, ErrorCode.InternalError, `the node running session ${sessionId ?? ""} (${node}) stopped answering: load the session again`);
}
