// Streamable HTTP profile (spec: "Message flow (Streamable HTTP)"): POST every
// client message, read the server's messages from the connection-scoped GET
// stream and one session-scoped GET stream per session, DELETE on close.
import type { Readable } from "node:stream";
import { Acp, AcpExt, Header, MediaType } from "../protocol/acp.ts";
import {
  errorResponse,
  ErrorCode,
  idKey,
  isRecord,
  isRequest,
  isResponse,
  paramsSessionId,
  validateMessage,
  type JsonRpcId,
  type JsonRpcMessage,
} from "../protocol/jsonrpc.ts";
import {
  DEFAULT_CLIENT_CONNECT_TIMEOUT_MS,
  DEFAULT_CLIENT_ERROR_BODY_BYTES,
  DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
  DEFAULT_CLIENT_PING_MS,
  DEFAULT_CLIENT_PING_TIMEOUT_MS,
  DEFAULT_CLIENT_STREAM_IDLE_MS,
  DEFAULT_CLIENT_STREAM_RESUMES,
} from "./limits.ts";
import { CookieJar } from "./cookies.ts";
import { discard, endpointUrl, header, readBody } from "./http-answer.ts";
import { AnswerRoutes } from "./answer-routes.ts";
import { openHttpChannel, type HttpAnswer, type HttpChannel } from "./http-channel.ts";
import { SseParser } from "./sse.ts";
import {
  httpStatusError,
  ClientTransportError,
  TransportErrorCode,
  type ClientTransport,
  type TransportOptions,
} from "./transport.ts";

/**
 * POST statuses after which the connection cannot go on: credentials refused,
 * or the server no longer knows the `Acp-Connection-Id` (a restarted server).
 */
const CONNECTION_FATAL_STATUSES: ReadonlySet<number> = new Set([401, 403, 404, 410]);
/** Requests that make a session follow this connection, and so may come before its stream opens. */
const LOADING_METHODS: ReadonlySet<string> = new Set([Acp.agent.session.load, Acp.agent.session.resume, AcpExt.sessionAttach]);

/** Whether an initialize result offers SSE resumption (`_meta.acpRemote.resumableStreams`). */
function offersResumableStreams(result: unknown): boolean {
  const meta = isRecord(result) ? result["_meta"] : undefined;
  const own = isRecord(meta) ? meta[AcpExt.metaKey] : undefined;
  return isRecord(own) && own[AcpExt.resumableStreams] === true;
}

/** Statuses of a server that has no Streamable HTTP here, only WebSocket (for `auto`). */
export const NO_STREAMABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([404, 405, 426, 501]);

interface Stream {
  ready: Promise<void>;
  body?: Readable;
  /** The id of the last event read on this stream or the one it resumes (sent as Last-Event-ID). */
  lastEventId?: string;
  /** Reopens in a row since the stream last brought an event. */
  resumes: number;
  /** (Re)arms the stream's idle watchdog (HTTP/1.1, once the server has shown it sends keep-alives). */
  watchIdle?: () => void;
}

export class HttpTransport implements ClientTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: (error?: ClientTransportError) => void;

  readonly #url: URL;
  readonly #path: string;
  readonly #options: TransportOptions;
  readonly #jar: CookieJar;
  readonly #ownsJar: boolean;
  readonly #maxMessageBytes: number;
  #channel: HttpChannel | undefined;
  #connectionId: string | undefined;
  /** `Acp-Protocol-Version` for requests after initialize: the version initialize settled on. */
  #protocolVersion: string | undefined;
  /** The server offered `_meta.acpRemote.resumableStreams`: a stream that ends is reopened with Last-Event-ID. */
  #resumable = false;
  /** A stream of this connection has brought a keep-alive: the server sends them, so a silent stream is a dead one. */
  #keepAlivesSeen = false;
  #connectionStream: Stream | undefined;
  readonly #sessionStreams = new Map<string, Stream>();
  readonly #serverRequests = new AnswerRoutes();
  /** Loads sent before their session's stream could open (qwen serve), by request id: the stream opens on their answer. */
  readonly #streamAfterLoad = new Map<string, string>();
  #closed = false;

  constructor(url: string | URL, options: TransportOptions = {}) {
    this.#url = endpointUrl(url);
    this.#path = `${this.#url.pathname}${this.#url.search}`;
    this.#options = options;
    this.#jar = options.cookies ?? new CookieJar();
    this.#ownsJar = options.cookies === undefined;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_CLIENT_MAX_MESSAGE_BYTES;
  }

  get connectionId(): string | undefined {
    return this.#connectionId;
  }

  get protocol(): string {
    return this.#channel?.protocol ?? "http";
  }

  /** Server requests whose answer the transport still routes (to their session); for diagnostics. */
  get serverRequestsKept(): number {
    return this.#serverRequests.size;
  }

  /** Loads whose answer will open their session's stream (servers that refuse the stream before the load); for diagnostics. */
  get loadsAwaitingStream(): number {
    return this.#streamAfterLoad.size;
  }

  async start(): Promise<void> {
    if (this.#channel !== undefined) return;
    const channel = await openHttpChannel(this.#url, {
      insecure: this.#options.insecure ?? false,
      ca: this.#options.ca,
      connectTimeoutMs: this.#options.connectTimeoutMs ?? DEFAULT_CLIENT_CONNECT_TIMEOUT_MS,
      pingIntervalMs: this.#options.pingIntervalMs ?? DEFAULT_CLIENT_PING_MS,
      pingTimeoutMs: this.#options.pingTimeoutMs ?? DEFAULT_CLIENT_PING_TIMEOUT_MS,
    });
    if (this.#closed) {
      // close() ran while the connection was being opened.
      channel.close();
      throw new ClientTransportError(TransportErrorCode.Closed, "the transport was closed while connecting");
    }
    this.#channel = channel;
    this.#channel.onclose = (error) => {
      this.#lost(new ClientTransportError(TransportErrorCode.ConnectionLost, `connection to ${this.#url.origin} lost: ${error?.message ?? "closed"}`, { cause: error }));
    };
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) throw new ClientTransportError(TransportErrorCode.Closed, "the transport is closed");
    if (this.#channel === undefined) await this.start();
    if (this.#connectionId === undefined) {
      await this.#initialize(message);
      return;
    }
    await this.#post(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const connectionId = this.#connectionId;
    try {
      if (connectionId !== undefined && this.#channel !== undefined) {
        // Spec: DELETE /acp — the explicit end of the connection and its sessions.
        const answer = await this.#request("DELETE", { [Header.ConnectionId]: connectionId });
        discard(answer.body);
      }
    } catch {
      // The server is gone already; there is nothing left to end.
    } finally {
      this.#teardown();
      this.onclose?.();
    }
  }

  // Spec: POST initialize without Acp-Connection-Id answers 200, JSON body,
  // `Acp-Connection-Id` header; then the connection-scoped GET stream opens.
  async #initialize(message: JsonRpcMessage): Promise<void> {
    if (!isRequest(message) || message.method !== Acp.agent.initialize) {
      throw new ClientTransportError(TransportErrorCode.Protocol, "the first message must be the initialize request");
    }
    const answer = await this.#request("POST", { [Header.ContentType]: MediaType.Json }, JSON.stringify(message));
    if (answer.status !== 200) {
      const body = await readBody(answer.body, DEFAULT_CLIENT_ERROR_BODY_BYTES, true).catch(() => "");
      throw httpStatusError("POST initialize", answer.status, body);
    }
    const text = await readBody(answer.body, this.#maxMessageBytes, false);
    const response = this.#parse(text);
    if (response === undefined || !isResponse(response) || idKey(response.id) !== idKey(message.id)) {
      throw new ClientTransportError(TransportErrorCode.Protocol, "the initialize answer is not the JSON-RPC response to initialize");
    }
    const fromResult = isRecord(response.result) && typeof response.result["connectionId"] === "string" ? response.result["connectionId"] : undefined;
    const connectionId = header(answer, Header.ConnectionId) ?? fromResult;
    if (connectionId === undefined) {
      if (response.error !== undefined) {
        // The agent refused initialize; hand the error on, there is no connection.
        this.onmessage?.(response);
        return;
      }
      throw new ClientTransportError(TransportErrorCode.Protocol, "the initialize answer has no Acp-Connection-Id");
    }
    if (this.#closed) {
      // close() ran while initialize was on its way: end the connection it made.
      await this.#request("DELETE", { [Header.ConnectionId]: connectionId }).then((a) => discard(a.body), () => {});
      this.#channel?.close();
      throw new ClientTransportError(TransportErrorCode.Closed, "the transport was closed during initialize");
    }
    this.#connectionId = connectionId;
    // Spec, Versioning 2: clients SHOULD send the negotiated version on every
    // request after initialization.
    if (isRecord(response.result) && typeof response.result["protocolVersion"] === "number") {
      this.#protocolVersion = String(response.result["protocolVersion"]);
    }
    this.#resumable = offersResumableStreams(response.result);
    await this.#openStream(undefined);
    this.onmessage?.(response);
  }

  async #post(message: JsonRpcMessage): Promise<void> {
    const connectionId = this.#connectionId as string;
    let sessionId = paramsSessionId(message);
    if (isResponse(message)) {
      // Answered now, whatever the server says to the POST: forget it.
      sessionId ??= this.#serverRequests.answered(message.id);
    }
    if (sessionId !== undefined) {
      // The session stream opens before the POST, so that a session/load on a
      // new connection finds it open for its replay (spec: Message flow, 8).
      try {
        await this.#openStream(sessionId);
      } catch (error) {
        if (isRequest(message) && LOADING_METHODS.has(message.method) && error instanceof ClientTransportError && (error.status === 403 || error.status === 404)) {
          // qwen serve opens a session's stream only to the connection that
          // loaded the session (403 "not owned by this connection"; the spec
          // has the stream opened first): the load goes first, the stream
          // opens on its answer, and the server keeps what it sends meanwhile.
          this.#streamAfterLoad.set(idKey(message.id), sessionId);
        } else if (error instanceof ClientTransportError && error.code === TransportErrorCode.HttpStatus) {
          this.#refuse(message, error);
          return;
        } else {
          throw error;
        }
      }
    }
    const headers: Record<string, string> = { [Header.ContentType]: MediaType.Json, [Header.ConnectionId]: connectionId };
    if (sessionId !== undefined) headers[Header.SessionId] = sessionId;
    const answer = await this.#request("POST", headers, JSON.stringify(message));
    if (answer.status >= 200 && answer.status < 300) {
      discard(answer.body);
      return;
    }
    const body = await readBody(answer.body, DEFAULT_CLIENT_ERROR_BODY_BYTES, true).catch(() => "");
    const error = httpStatusError(`POST ${"method" in message ? message.method : "response"}`, answer.status, body);
    if (CONNECTION_FATAL_STATUSES.has(answer.status)) {
      this.#lost(error);
      throw error;
    }
    this.#refuse(message, error);
  }

  /**
   * A message the server refused with a status that does not end the
   * connection: a request gets a JSON-RPC error response of its own (the
   * server's JSON-RPC error when its body carries one, design: decision 5);
   * anything else can only be reported.
   */
  #refuse(message: JsonRpcMessage, error: ClientTransportError): void {
    if (isRequest(message)) {
      // A refused load gets no answer from the server that would take its entry.
      this.#takeStreamAfterLoad(message.id);
      const parsed = this.#parse(error.body ?? "");
      const serverError = parsed !== undefined && isResponse(parsed) ? parsed.error : undefined;
      this.onmessage?.(
        errorResponse(message.id, serverError?.code ?? ErrorCode.InternalError, serverError?.message ?? error.message, {
          status: error.status,
        }),
      );
      return;
    }
    this.onerror?.(error);
  }

  /**
   * Opens the connection stream (no session) or a session's stream, once;
   * `resuming` is the stream it takes over from, whose last event id it sends.
   */
  #openStream(sessionId: string | undefined, resuming?: Stream): Promise<void> {
    const existing = sessionId === undefined ? this.#connectionStream : this.#sessionStreams.get(sessionId);
    if (existing !== undefined) return existing.ready;
    const stream: Stream = { ready: Promise.resolve(), resumes: resuming === undefined ? 0 : resuming.resumes + 1 };
    if (resuming?.lastEventId !== undefined) stream.lastEventId = resuming.lastEventId;
    const headers: Record<string, string> = { [Header.Accept]: MediaType.EventStream, [Header.ConnectionId]: this.#connectionId as string };
    if (sessionId !== undefined) headers[Header.SessionId] = sessionId;
    if (stream.lastEventId !== undefined) headers[Header.LastEventId] = stream.lastEventId;
    stream.ready = this.#request("GET", headers).then(async (answer) => {
      if (answer.status !== 200) {
        const body = await readBody(answer.body, DEFAULT_CLIENT_ERROR_BODY_BYTES, true).catch(() => "");
        throw httpStatusError(sessionId === undefined ? "GET connection stream" : `GET session stream ${sessionId}`, answer.status, body);
      }
      stream.body = answer.body;
      void this.#read(stream, sessionId);
    });
    if (sessionId === undefined) this.#connectionStream = stream;
    else this.#sessionStreams.set(sessionId, stream);
    stream.ready.catch(() => {
      // A stream that failed to open may be asked for again later.
      if (sessionId === undefined) {
        if (this.#connectionStream === stream) this.#connectionStream = undefined;
      } else if (this.#sessionStreams.get(sessionId) === stream) {
        this.#sessionStreams.delete(sessionId);
      }
    });
    return stream.ready;
  }

  async #read(stream: Stream, sessionId: string | undefined): Promise<void> {
    const body = stream.body as Readable;
    const parser = new SseParser(this.#maxMessageBytes);
    let failure: Error | undefined;
    // HTTP/2 has pings; over HTTP/1.1 the server's keep-alive comments are the
    // only sign of life, so a stream that goes silent is dead: each stream is
    // a socket of its own, and a session's may die while the connection's
    // lives. Only once the server has shown it sends them: the spec does not
    // make them a rule (v2 will), and a quiet server must not be cut off. A
    // stream is watched once it brought keep-alives itself, or, when the
    // server resumes streams (a false alarm then costs one reopen), once any
    // stream of the connection did: a stream that goes silent before its
    // first keep-alive is caught too.
    const idleMs = this.#options.streamIdleMs ?? DEFAULT_CLIENT_STREAM_IDLE_MS;
    let idle: NodeJS.Timeout | undefined;
    const watchIdle = this.protocol === "http/1.1";
    const watch = (): void => {
      if (!watchIdle || !(parser.comments > 0 || (this.#resumable && this.#keepAlivesSeen))) return;
      clearTimeout(idle);
      idle = setTimeout(() => body.destroy(new Error(`no data, not even a keep-alive, for ${idleMs} ms`)), idleMs);
      idle.unref();
    };
    stream.watchIdle = watch;
    const onEvent = (data: string, id: string | undefined): void => {
      if (id !== undefined) stream.lastEventId = id;
      // An event without data only gives the reader an id to resume from: the
      // server's first event on a stream, so that a stream cut before any
      // message can still be resumed. It is no sign the stream carries
      // messages again, so it leaves the count of reopens alone.
      if (data === "") return;
      stream.resumes = 0;
      this.#receive(data, sessionId);
    };
    try {
      // Armed from the start: a stream that never brings a byte is dead too.
      watch();
      for await (const chunk of body as AsyncIterable<Buffer>) {
        parser.push(chunk, onEvent);
        if (this.#closed) return;
        if (parser.comments > 0 && !this.#keepAlivesSeen) {
          // The first keep-alive of the connection: every open stream is watched from now on, this one included.
          this.#keepAlivesSeen = true;
          for (const open of [this.#connectionStream, ...this.#sessionStreams.values()]) if (open !== stream) open?.watchIdle?.();
        }
        watch();
      }
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    } finally {
      clearTimeout(idle);
      stream.watchIdle = undefined;
    }
    if (this.#closed) return;
    const ended = `the ${sessionId === undefined ? "connection stream" : `stream of session ${sessionId}`} ended${failure ? `: ${failure.message}` : ""}`;
    if (failure instanceof ClientTransportError && failure.code === TransportErrorCode.Protocol) {
      this.#lost(failure);
      return;
    }
    if (sessionId === undefined) this.#connectionStream = undefined;
    else this.#sessionStreams.delete(sessionId);
    if (this.#resumable && stream.resumes < DEFAULT_CLIENT_STREAM_RESUMES) {
      // The server keeps what it wrote: the stream opens again after its last
      // event and misses nothing. When it cannot (410: the events are no
      // longer kept; 404: the connection is gone), the connection is lost and
      // the relay reconnects and loads its sessions.
      this.#openStream(sessionId, stream).catch((error: unknown) => {
        this.#lost(
          new ClientTransportError(TransportErrorCode.ConnectionLost, `${ended}; resuming it failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
        );
      });
      return;
    }
    if (sessionId === undefined) {
      // The connection stream is the connection's lifeline: when it ends and
      // cannot be resumed, the server has ended or lost the connection.
      this.#lost(new ClientTransportError(TransportErrorCode.ConnectionLost, ended, { cause: failure }));
      return;
    }
    // Only this session's stream ended; the next message for it opens it again.
    this.onerror?.(new ClientTransportError(TransportErrorCode.ConnectionLost, ended));
  }

  #receive(data: string, sessionId: string | undefined): void {
    const message = this.#parse(data);
    if (message === undefined) {
      this.onerror?.(new ClientTransportError(TransportErrorCode.Protocol, `ignored an SSE event that is not a JSON-RPC message (${data.length} characters)`));
      return;
    }
    if (isRequest(message)) this.#serverRequests.received(message.id, sessionId ?? paramsSessionId(message));
    else if (!isResponse(message) && message.method === Acp.protocol.cancelRequest) this.#serverRequests.withdrawn(message.params);
    // Taken on any answer: a load that failed opens no stream, and its entry must not stay.
    const loaded = isResponse(message) ? this.#takeStreamAfterLoad(message.id) : undefined;
    if (loaded !== undefined && isResponse(message) && message.error === undefined) {
      this.#openStream(loaded).catch((error: unknown) => {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      });
    }
    // A session/new or session/load result names a session: open its stream now
    // so its updates flow before the first prompt.
    if (isResponse(message) && isRecord(message.result) && typeof message.result["sessionId"] === "string") {
      this.#openStream(message.result["sessionId"]).catch((error: unknown) => {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      });
    }
    this.onmessage?.(message);
  }

  #takeStreamAfterLoad(id: JsonRpcId): string | undefined {
    if (id === null) return undefined;
    const key = idKey(id);
    const sessionId = this.#streamAfterLoad.get(key);
    this.#streamAfterLoad.delete(key);
    return sessionId;
  }

  #parse(text: string): JsonRpcMessage | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    const checked = validateMessage(value);
    return checked.ok ? checked.message : undefined;
  }

  async #request(method: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    const channel = this.#channel;
    if (channel === undefined || (this.#closed && method !== "DELETE")) {
      throw new ClientTransportError(TransportErrorCode.Closed, "the transport is closed");
    }
    const all: Record<string, string> = { ...this.#options.headers, ...headers };
    if (this.#options.token !== undefined) all[Header.Authorization] = `Bearer ${this.#options.token}`;
    if (this.#protocolVersion !== undefined) all[Header.ProtocolVersion] = this.#protocolVersion;
    const cookie = this.#jar.header(this.#url);
    if (cookie !== undefined) all[Header.Cookie] = cookie;
    let answer: HttpAnswer;
    try {
      answer = await channel.request(method, this.#path, all, body);
    } catch (error) {
      const failure =
        error instanceof ClientTransportError ? error : new ClientTransportError(TransportErrorCode.ConnectionLost, String(error), { cause: error });
      if (method !== "DELETE" && this.#connectionId !== undefined) this.#lost(failure);
      throw failure;
    }
    this.#jar.store(this.#url, answer.headers[Header.SetCookie]);
    return answer;
  }

  /** The connection is unusable: tear down and tell the owner, once. */
  #lost(error: ClientTransportError): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#teardown();
    this.onclose?.(error);
  }

  #teardown(): void {
    this.#connectionStream?.body?.destroy();
    for (const stream of this.#sessionStreams.values()) stream.body?.destroy();
    this.#sessionStreams.clear();
    this.#serverRequests.clear();
    this.#streamAfterLoad.clear();
    this.#channel?.close();
    if (this.#ownsJar) this.#jar.clear();
  }
}
