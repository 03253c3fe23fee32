// One Streamable HTTP connection: the hub's ClientLink for it, and its GET
// streams (one connection stream, one stream per session; spec: "Connection"
// and "Session" resources). The hub says which session a message belongs to
// and which request a response answers; this class chooses the stream (the
// profile's rule) and keeps the streams and their readers. A session's stream,
// with what it keeps for a resume, lives while the session is attached here
// or a reader holds it: a connection that used many sessions in turn does
// not keep a stream for each until it ends.
import { randomBytes } from "node:crypto";
import type { ClientLink, HubConnection, Principal } from "../hub/types.ts";
import { Acp, CONNECTION_STREAM_RESPONSES } from "../../protocol/acp.ts";
import type { JsonRpcId, JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { idKey, isRecord, isRequest } from "../../protocol/jsonrpc.ts";
import type { TransportConnection } from "./connection-registry.ts";
import { OutboundStream } from "./outbound-stream.ts";
import type { AttachResult, OutboundLimits } from "./outbound-stream.ts";
import type { OutboundSink } from "../http/outbound-sink.ts";

/**
 * Random bytes naming one stream in its event ids: 12 hex digits, unique
 * among a server's streams for practical purposes. Hex, so that the tag never
 * holds the `-` that ends it in `<tag>-<n>`.
 */
const STREAM_TAG_BYTES = 6;

/** The id of the server request a `$/cancel_request` withdraws, if the message is one. */
function withdrawnRequestId(message: JsonRpcMessage): JsonRpcId | undefined {
  if (!("method" in message) || message.method !== Acp.protocol.cancelRequest || !isRecord(message.params)) return undefined;
  const id = message.params["requestId"];
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

export class HttpConnection implements ClientLink, TransportConnection {
  readonly connectionId: string;
  readonly principal: Principal;
  readonly profile: string;
  /** Set right after `hub.connect`, before the connection is registered. */
  hub: HubConnection | undefined;
  readonly #limits: OutboundLimits;
  readonly #connectionStream: OutboundStream;
  readonly #sessionStreams = new Map<string, OutboundStream>();
  /** Server-to-client requests sent on a session stream, by id: their responses are session-scoped POSTs. */
  readonly #sessionRequests = new Map<string, string>();
  #openReaders = 0;
  #requestsInFlight = 0;
  #ended = false;
  /** Called whenever readers or requests come and go, so the registry can (re)arm the idle timer. */
  onActivity: () => void = () => {};
  /** Called when a stream's reader is cut off for not reading. */
  onCutOff: (sessionId: string | undefined) => void = () => {};

  constructor(options: { connectionId: string; principal: Principal; profile: string; limits: OutboundLimits }) {
    this.connectionId = options.connectionId;
    this.principal = options.principal;
    this.profile = options.profile;
    this.#limits = options.limits;
    this.#connectionStream = this.#newStream(undefined);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Spec: POST /acp, "Which stream carries the response": responses to
   * session/new and session/load on the connection stream; other messages of
   * a session on its session stream; the rest on the connection stream.
   */
  send(message: JsonRpcMessage, session?: string, answers?: string): void {
    if (this.#ended) return;
    const sessionId = answers !== undefined && CONNECTION_STREAM_RESPONSES.has(answers) ? undefined : session;
    if (sessionId !== undefined && isRequest(message)) this.#sessionRequests.set(idKey(message.id), sessionId);
    else {
      // A withdrawn request gets no answer that counts: forget it now, not at the connection's end.
      const withdrawn = withdrawnRequestId(message);
      if (withdrawn !== undefined) this.#sessionRequests.delete(idKey(withdrawn));
    }
    this.stream(sessionId).push(message);
  }

  /** The connection stream, or the session's stream (created on first use: it buffers until its GET). */
  stream(sessionId: string | undefined): OutboundStream {
    if (sessionId === undefined) return this.#connectionStream;
    let stream = this.#sessionStreams.get(sessionId);
    if (stream === undefined) {
      stream = this.#newStream(sessionId);
      this.#sessionStreams.set(sessionId, stream);
    }
    return stream;
  }

  /**
   * Attaches a GET's sink to a stream, after message `after` when the reader
   * resumes (Last-Event-ID); "busy" when that stream has a reader already
   * (409), "not-kept" when it cannot resume from there (410). `release` must
   * be called when the GET's response closes.
   */
  attachReader(
    sessionId: string | undefined,
    sink: OutboundSink,
    after?: number,
  ): { release: () => void } | Exclude<AttachResult, "attached"> {
    if (this.#ended) return "busy";
    const stream = this.stream(sessionId);
    const attached = stream.attach(sink, after);
    if (attached !== "attached") return attached;
    this.#openReaders += 1;
    this.onActivity();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        stream.detach(sink);
        this.#openReaders -= 1;
        if (sessionId !== undefined) this.#dropIfLeft(sessionId);
        this.onActivity();
      },
    };
  }

  /**
   * The session left this connection (closed, deleted, detached, or loaded
   * by another connection): its stream goes once no reader holds it. Checked
   * on the next turn of the event loop, so that the answer to the request
   * that made it leave (session/close answers on the session's stream) is
   * in the stream first.
   */
  sessionLeft(sessionId: string): void {
    if (this.#ended || !this.#sessionStreams.has(sessionId)) return;
    setImmediate(() => this.#dropIfLeft(sessionId)).unref();
  }

  /**
   * The session on whose stream the server request with this id was sent,
   * forgetting it: the response is being delivered now.
   */
  takeSessionRequest(id: JsonRpcId): string | undefined {
    const key = idKey(id);
    const sessionId = this.#sessionRequests.get(key);
    this.#sessionRequests.delete(key);
    return sessionId;
  }

  /** Session streams held now (for tests of the bound). */
  get sessionStreamCount(): number {
    return this.#sessionStreams.size;
  }

  /** Server requests still waiting for their answer (for tests of the bound). */
  get pendingServerRequests(): number {
    return this.#sessionRequests.size;
  }

  /** Peeks without forgetting (validation runs before delivery). */
  sessionOfRequest(id: JsonRpcId): string | undefined {
    return this.#sessionRequests.get(idKey(id));
  }

  /** Brackets one POST, which keeps the connection from going idle. */
  beginRequest(): () => void {
    this.#requestsInFlight += 1;
    this.onActivity();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#requestsInFlight -= 1;
      this.onActivity();
    };
  }

  isIdle(): boolean {
    return !this.#ended && this.#openReaders === 0 && this.#requestsInFlight === 0;
  }

  /** The client is gone: streams end, sessions detach and stay loadable (design: decision 3). */
  detach(): void {
    if (!this.#end()) return;
    this.hub?.detach();
  }

  /** Its event streams end; the client's next request gets 401. */
  revoke(): void {
    this.detach();
  }

  /** DELETE: streams end, the connection and its sessions end for good. */
  close(): void {
    if (!this.#end()) return;
    this.hub?.close();
  }

  #end(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    this.#connectionStream.close();
    for (const stream of this.#sessionStreams.values()) stream.close();
    this.#sessionStreams.clear();
    this.#sessionRequests.clear();
    return true;
  }

  /** Drops the session's stream, and the server requests sent on it, when no reader holds it and the session is not attached. */
  #dropIfLeft(sessionId: string): void {
    const stream = this.#sessionStreams.get(sessionId);
    if (this.#ended || stream === undefined || stream.attached || this.hub?.sessionAccess(sessionId) === "attached") return;
    this.#sessionStreams.delete(sessionId);
    stream.close();
    // Their answers could not be taken any more (the session is not attached): nothing waits for them.
    for (const [id, session] of this.#sessionRequests) if (session === sessionId) this.#sessionRequests.delete(id);
  }

  #newStream(sessionId: string | undefined): OutboundStream {
    const stream = new OutboundStream(this.#limits, randomBytes(STREAM_TAG_BYTES).toString("hex"));
    stream.onCutOff = () => this.onCutOff(sessionId);
    return stream;
  }
}
