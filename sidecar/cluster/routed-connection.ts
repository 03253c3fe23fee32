// One client connection on a node of several (shared store). Its sessions
// run either here, through the local hub connection, or on the live node that
// is their home, through a NodeLink to that node: the client cannot tell. A
// session unknown here is looked up in the store's directory when the client
// first names it; a live home elsewhere gets the message, a dead (or no) home
// leaves it to the local hub, which takes the session over.
//
// Messages of one session are handled in the order they came: a directory
// lookup (and the link it opens) holds the messages of its session behind it
// until it is settled. Each session has a queue of its own, so a home node
// that is alive but silent holds its own sessions' messages only, never
// another session's prompt, cancel or permission answer.
import { Acp, AcpExt } from "../../protocol/acp.ts";
import { ErrorCode, errorResponse, idKey, isNotification, isRecord, isRequest, isResponse, paramsSessionId } from "../../protocol/jsonrpc.ts";
import type { JsonRpcId, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import type { ClientLink, ConnectOptions, HubConnection, SessionAccess } from "../hub/types.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { NodeLink } from "./node-link.ts";
import type { NodePresence } from "./node-presence.ts";
import type { Log } from "../../protocol/log-line.ts";

export interface ClusterDeps {
  store: SharedStore;
  presence: NodePresence;
  /** The secret the nodes share, from their configuration: links to other nodes sign their claims with it. */
  nodeSecret: string;
  /** PEM certificates other nodes' TLS certificates must chain to (--node-ca); the system's CAs when absent. */
  nodeCa?: string;
  log: Log;
}

/** Prefix of the ids this node gives the requests another node sends its client: `node~<link>~<id>`. */
const REMOTE_ID_PREFIX = "node~";

/** The queue of the messages that belong to no session (session/new, session/list, answers to this node's requests). */
const CONNECTION_QUEUE = "";

/** Requests whose success means the session is no longer attached to the client's connection. */
const LEAVING_METHODS: ReadonlySet<string> = new Set([Acp.agent.session.close, Acp.agent.session.delete, AcpExt.sessionDetach]);

interface Remote {
  node: string;
  link: Promise<NodeLink>;
  /** Client requests sent over the link and not answered yet: id → what the transport needs to route the answer. */
  pending: Map<string, { id: JsonRpcId; method: string; sessionId: string | undefined }>;
  /** The other node's requests to the client, by the id the client sees: their own id, and their session. */
  theirs: Map<string, { id: JsonRpcId; sessionId: string | undefined }>;
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
  /** Per session (CONNECTION_QUEUE for none): the last message's handling, which the next one waits for. */
  readonly #queues = new Map<string, Promise<void>>();
  /** Client requests waiting in a queue, by id key: the queue a `$/cancel_request` of one must follow. */
  readonly #queued = new Map<string, string>();
  #nextRemote = 0;
  /** Set by detach() and close(): messages after them are not routed. */
  #ending = false;
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
    if (this.#ending) return;
    const queue = this.#queueOf(message);
    const key = isRequest(message) ? idKey(message.id) : undefined;
    if (key !== undefined) this.#queued.set(key, queue);
    this.#enqueue(queue, () => {
      if (key !== undefined && this.#queued.get(key) === queue) this.#queued.delete(key);
      return this.#route(message);
    });
  }

  // Both wait for the messages before them, in every queue: a client's last
  // request is handled before its connection goes.
  detach(): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#afterAll(() => {
      this.#end();
      this.#local.detach();
    });
  }

  close(): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#afterAll(async () => {
      // The sessions that run elsewhere end there too, as they would here;
      // the other node handles each session/close before the link's close.
      for (const [sessionId, remote] of this.#sessions) {
        const link = await remote.link.catch(() => undefined);
        try {
          link?.send({ jsonrpc: "2.0", id: `acp-remote-close-${sessionId}`, method: Acp.agent.session.close, params: { sessionId } });
        } catch {
          // That node is gone: its sessions are taken over when next named.
        }
      }
      this.#end();
      this.#local.close();
    });
  }

  /**
   * The queue a message waits in: its session's; for an answer to another
   * node's request, the session that request came for; for a
   * `$/cancel_request`, the queue of the request it withdraws.
   */
  #queueOf(message: JsonRpcMessage): string {
    if (isResponse(message)) {
      if (typeof message.id !== "string" || !message.id.startsWith(REMOTE_ID_PREFIX)) return CONNECTION_QUEUE;
      for (const remote of this.#remotes.values()) {
        const theirs = remote.theirs.get(message.id);
        if (theirs !== undefined) return theirs.sessionId ?? CONNECTION_QUEUE;
      }
      return CONNECTION_QUEUE;
    }
    if (isNotification(message) && message.method === Acp.protocol.cancelRequest) {
      const requestId = cancelledId(message);
      if (requestId === undefined) return CONNECTION_QUEUE;
      const key = idKey(requestId);
      const waiting = this.#queued.get(key);
      if (waiting !== undefined) return waiting;
      for (const remote of this.#remotes.values()) {
        const sent = remote.pending.get(key);
        if (sent !== undefined) return sent.sessionId ?? CONNECTION_QUEUE;
      }
      return CONNECTION_QUEUE;
    }
    return paramsSessionId(message) ?? CONNECTION_QUEUE;
  }

  #enqueue(queue: string, step: () => void | Promise<void>): void {
    const next = (this.#queues.get(queue) ?? Promise.resolve()).then(step).catch((error: unknown) => {
      this.#deps.log(`acp-remote: a message could not be routed: ${error instanceof Error ? error.message : String(error)}`, "warn");
    });
    this.#queues.set(queue, next);
    // A queue that ran dry is forgotten: a connection that used many sessions keeps none of theirs.
    void next.then(() => {
      if (this.#queues.get(queue) === next) this.#queues.delete(queue);
    });
  }

  /** Runs `step` once every message received so far is handled. */
  #afterAll(step: () => void | Promise<void>): void {
    const all = Promise.all([...this.#queues.values()]);
    this.#enqueue(CONNECTION_QUEUE, () => all.then(step));
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
      // #linkFailed answers the requests pending there, this one among them, with the "node gone" error.
      if (this.#remotes.get(remote.node) === remote) return this.#linkFailed(remote, error);
      if (request && remote.pending.delete(idKey(request.id))) this.#client.send(gone(request.id, sessionId, remote.node), sessionId, request.method);
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
    const link = NodeLink.open({
      url,
      nodeSecret: this.#deps.nodeSecret,
      from: this.#deps.presence.nodeId,
      to: node,
      ...(this.#deps.nodeCa === undefined ? {} : { ca: this.#deps.nodeCa }),
      principal: this.#client.principal,
      ...(this.#options.agent === undefined ? {} : { agent: this.#options.agent }),
      initialize: this.#initialize,
      onMessage: (message) => this.#fromRemote(remote as Remote, message),
      onClose: (reason) => this.#linkFailed(remote as Remote, new Error(reason)),
    });
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
      if (request.sessionId !== undefined && LEAVING_METHODS.has(request.method) && !("error" in message && message.error)) {
        // Closed, deleted or detached there: no longer this connection's, here either.
        this.#sessions.delete(request.sessionId);
        this.#client.sessionLeft?.(request.sessionId);
      }
      return;
    }
    const sessionId = paramsSessionId(message);
    if (!isRequest(message)) {
      if (message.method === Acp.protocol.cancelRequest && isRecord(message.params)) {
        // The other node withdrew one of its requests: the client knows it by this connection's id.
        const theirs = message.params["requestId"];
        const ours = [...remote.theirs].find(([, request]) => request.id === theirs)?.[0];
        if (ours === undefined) return;
        remote.theirs.delete(ours);
        this.#client.send({ ...message, params: { ...message.params, requestId: ours } }, sessionId);
        return;
      }
      this.#client.send(message, sessionId);
      return;
    }
    const ours = `${REMOTE_ID_PREFIX}${remote.index}~${idKey(message.id)}`;
    remote.theirs.set(ours, { id: message.id, sessionId });
    this.#client.send({ ...message, id: ours }, sessionId);
  }

  /** The client's answer to a request: to the node that asked, or to the local hub. */
  async #answer(response: JsonRpcResponse): Promise<void> {
    if (typeof response.id === "string" && response.id.startsWith(REMOTE_ID_PREFIX)) {
      for (const remote of this.#remotes.values()) {
        const theirs = remote.theirs.get(response.id);
        if (theirs === undefined) continue;
        remote.theirs.delete(response.id);
        await this.#sendOver(remote, { ...response, id: theirs.id });
        return;
      }
      return;
    }
    this.#local.receive(response);
  }

  /** The client withdrew one of its requests: it goes where the request went. */
  async #cancel(message: JsonRpcMessage): Promise<void> {
    const requestId = cancelledId(message);
    if (requestId !== undefined) {
      for (const remote of this.#remotes.values()) {
        if (!remote.pending.has(idKey(requestId))) continue;
        await this.#sendOver(remote, message);
        return;
      }
    }
    this.#local.receive(message);
  }

  /** Sends a message that expects no answer over a link; a link that is gone is reported as lost. */
  async #sendOver(remote: Remote, message: JsonRpcMessage): Promise<void> {
    try {
      (await remote.link).send(message);
    } catch (error) {
      this.#linkFailed(remote, error);
    }
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
    this.#deps.log(`acp-remote: link to node ${remote.node} lost: ${error instanceof Error ? error.message : String(error)}`, "warn");
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

/** The id of the request a `$/cancel_request` withdraws. */
function cancelledId(message: JsonRpcMessage): JsonRpcId | undefined {
  const params = "params" in message ? message.params : undefined;
  const id = isRecord(params) ? params["requestId"] : undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

function gone(id: JsonRpcId, sessionId: string | undefined, node: string): JsonRpcResponse {
  return errorResponse(id, ErrorCode.InternalError, `the node running session ${sessionId ?? ""} (${node}) stopped answering: load the session again`);
}
