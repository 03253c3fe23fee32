// The Streamable HTTP profile of /acp: POST, GET (SSE) and DELETE (spec:
// "Endpoints"). Every handler validates in the spec's order and returns at
// the first failure; errors are thrown as TransportError and answered by
// `sendError`, the one place that turns them into statuses.
import { randomUUID } from "node:crypto";
import type { ConnectionHub, Principal } from "../hub/types.ts";
import type { HttpRequest, HttpResponse } from "../http/types.ts";
import type { JsonRpcMessage, JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import { isRecord, isResponse, paramsSessionId, validateMessage } from "../../protocol/jsonrpc.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import { jsonTextDeeperThan } from "../../common/json-depth.ts";
import { DEFAULT_MAX_JSON_DEPTH } from "../limits.ts";
import type { ConnectionRegistry } from "./connection-registry.ts";
import { BODY_REFUSALS, Errors, TransportError } from "./errors.ts";
import { HttpConnection } from "./http-connection.ts";
import type { OutboundStream } from "./outbound-stream.ts";
import { ReplayBudget } from "./replay-budget.ts";
import { Acp, AcpExt, Header, MediaType, SESSION_SCOPED_METHODS } from "../../protocol/acp.ts";
import { readBody } from "../http/read-body.ts";
import { SseSink } from "../http/sse-sink.ts";
import type { Log } from "../../protocol/log-line.ts";

/** Methods that may name a session the server knows but that is not attached yet: they attach it. */
const REATTACH_METHODS: ReadonlySet<string> = new Set([Acp.agent.session.load, Acp.agent.session.resume, AcpExt.sessionAttach]);

export interface HttpProfileOptions {
  hub: ConnectionHub;
  registry: ConnectionRegistry;
  limits: ServerLimits;
  /** `Set-Cookie` value of the affinity cookie (design: decision 7). */
  affinityCookie: string;
  log: Log;
  /** True once the server shuts down. */
  closing: () => boolean;
}

function header(req: HttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.length === 0 ? undefined : first;
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(";")[0]?.trim().toLowerCase();
}

/** The body as parsed JSON, or why it is not (the reasons are reported in the spec's order later). */
type Parsed = { kind: "json"; value: unknown } | { kind: "malformed" } | { kind: "too-deep" };

function parse(body: Buffer): Parsed {
  const text = body.toString("utf8");
  // Before the parse: a body of nested brackets is refused for the cost of a scan (common/json-depth.ts).
  if (jsonTextDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)) return { kind: "too-deep" };
  try {
    return { kind: "json", value: JSON.parse(text) };
  } catch {
    return { kind: "malformed" };
  }
}

function methodOf(parsed: Parsed): string | undefined {
  if (parsed.kind !== "json" || !isRecord(parsed.value)) return undefined;
  const method = parsed.value["method"];
  return typeof method === "string" ? method : undefined;
}

export class HttpProfile {
  readonly #options: HttpProfileOptions;
  /** What the SSE streams of every connection keep for resuming readers, together. */
  readonly #replayBudget: ReplayBudget;

  constructor(options: HttpProfileOptions) {
    this.#options = options;
    this.#replayBudget = new ReplayBudget(options.limits.sseReplayBudgetChars);
  }

  /** POST /acp (spec: "POST /acp", "Validation order summary"). */
  async post(req: HttpRequest, res: HttpResponse, principal: Principal): Promise<void> {
    const { registry, limits } = this.#options;
    const connectionId = header(req, Header.ConnectionId);
    const sessionHeader = header(req, Header.SessionId);

    // Known connections are looked up before the body is read, so an unknown
    // id costs nothing; a missing one needs the body to tell initialize apart.
    let connection: HttpConnection | undefined;
    if (connectionId !== undefined) {
      const found = registry.get(connectionId, principal);
      if (!(found instanceof HttpConnection) || found.ended) throw Errors.unknownConnection();
      connection = found;
    }
    const done = connection?.beginRequest();
    try {
      let body: Buffer;
      try {
        body = await readBody(req, limits.maxBodyBytes, BODY_REFUSALS);
      } catch (error) {
        if (error instanceof TransportError) stopReading(req, res);
        throw error;
      }
      const parsed = parse(body);
      const method = methodOf(parsed);

      // 1. No Acp-Connection-Id on a non-initialize message: 400.
      if (connection === undefined && method !== Acp.agent.initialize) throw Errors.missingConnectionId();
      // 2. Unknown Acp-Connection-Id: 404 (checked above, before reading).
      // 3. A session-scoped request, or a response to a request made on a session stream, without Acp-Session-Id: 400.
      if (connection !== undefined && sessionHeader === undefined) {
        if (method !== undefined && SESSION_SCOPED_METHODS.has(method)) throw Errors.missingSessionId(method);
        if (parsed.kind === "json" && isRecord(parsed.value) && method === undefined && "id" in parsed.value) {
          const id = parsed.value["id"];
          if ((typeof id === "string" || typeof id === "number") && connection.sessionOfRequest(id) !== undefined) {
            throw Errors.missingSessionId("a response to a session-scoped request");
          }
        }
      }
      // 4. Content-Type other than application/json: 415.
      if (mediaType(header(req, Header.ContentType)) !== MediaType.Json) throw Errors.unsupportedMediaType();
      // 5. A batch: 501.
      if (parsed.kind === "json" && Array.isArray(parsed.value)) throw Errors.batch();
      // 6. Malformed JSON: 400 / -32700; not one JSON-RPC message: 400 / -32600.
      if (parsed.kind === "malformed") throw Errors.parse();
      if (parsed.kind === "too-deep") throw Errors.tooDeep(DEFAULT_MAX_JSON_DEPTH);
      const checked = validateMessage(parsed.value);
      if (!checked.ok) throw Errors.invalidMessage(checked.reason);
      const message = checked.message;

      if (connection === undefined) {
        await this.#initialize(req, res, principal, message as JsonRpcRequest);
        return;
      }
      if (method === Acp.agent.initialize) throw Errors.initializeOnConnection();
      // 7. Acp-Session-Id unknown for the connection: 404.
      if (sessionHeader !== undefined) await connection.hub?.resolveSession?.(sessionHeader);
      this.#checkSession(connection, message, sessionHeader, method);
      if (isResponse(message) && message.id !== null) connection.takeSessionRequest(message.id);
      connection.hub?.receive(message);
      res.writeHead(202, { "content-length": "0" });
      res.end();
    } finally {
      done?.();
    }
  }

  /** GET /acp without Upgrade: an SSE stream (spec: "GET /acp (SSE stream)"). */
  async get(req: HttpRequest, res: HttpResponse, principal: Principal): Promise<void> {
    const accept = header(req, Header.Accept) ?? "";
    if (!accept.toLowerCase().includes(MediaType.EventStream)) throw Errors.notAcceptable();
    const connectionId = header(req, Header.ConnectionId);
    if (connectionId === undefined) throw Errors.missingConnectionId();
    const connection = this.#options.registry.get(connectionId, principal);
    if (!(connection instanceof HttpConnection) || connection.ended) throw Errors.unknownConnection();
    const sessionId = header(req, Header.SessionId);
    if (sessionId !== undefined) {
      await connection.hub?.resolveSession?.(sessionId);
      // A DELETE may have ended the connection during the lookup: the stream would end at once, empty.
      if (connection.ended) throw Errors.unknownConnection();
    }
    // Design, decision 2: a session the server knows for this principal may be
    // opened before session/load attaches it; it buffers until then.
    if (sessionId !== undefined && connection.hub?.sessionAccess(sessionId) === "unknown") throw Errors.unknownSession();
    const stream = connection.stream(sessionId);
    const after = resumePoint(stream, header(req, Header.LastEventId));
    if (stream.attached) {
      // A second reader gets 409; a resuming one has lost the first, which
      // the server may not have seen close yet: it takes the stream over.
      if (after === undefined) throw Errors.streamAlreadyOpen();
      stream.dropReader();
    }

    let reader: { release: () => void } | undefined;
    const sink: SseSink = new SseSink(res, {
      keepAliveMs: this.#options.limits.keepAliveMs,
      eventTag: stream.resumable ? stream.tag : undefined,
      // Only while this sink is the stream's reader: a dropped one may drain late.
      onDrain: () => stream.resume(sink),
      onClose: () => reader?.release(),
    });
    const attached = connection.attachReader(sessionId, sink, after);
    if (typeof attached === "string") return sink.end();
    reader = attached;
  }

  /** DELETE /acp: the connection and its sessions end; its streams close (spec: "DELETE /acp"). */
  delete(req: HttpRequest, res: HttpResponse, principal: Principal): void {
    const connectionId = header(req, Header.ConnectionId);
    if (connectionId === undefined) throw Errors.missingConnectionId();
    const connection = this.#options.registry.get(connectionId, principal);
    if (!(connection instanceof HttpConnection)) throw Errors.unknownConnection();
    this.#options.registry.remove(connection);
    connection.close();
    res.writeHead(202, { "content-length": "0" });
    res.end();
  }

  async #initialize(req: HttpRequest, res: HttpResponse, principal: Principal, request: JsonRpcRequest): Promise<void> {
    const { hub, registry, limits } = this.#options;
    registry.assertRoom();
    const connection = new HttpConnection({
      connectionId: randomUUID(),
      principal,
      profile: req.httpVersionMajor >= 2 ? "http2" : "http1",
      limits: {
        maxQueuedMessages: limits.maxQueuedMessages,
        maxQueuedBytes: limits.maxQueuedBytes,
        replayEvents: limits.sseReplayEvents,
        replayChars: limits.sseReplayChars,
        replayBudget: this.#replayBudget,
      },
    });
    const url = new URL(req.url ?? "/", "http://localhost");
    connection.hub = hub.connect(connection, { agent: url.searchParams.get("agent") ?? undefined });
    connection.onActivity = () => registry.touch(connection);
    connection.onCutOff = (sessionId) =>
      this.#options.log(`acp: stream ${sessionId ?? "(connection)"} of ${connection.connectionId} cut off: its reader stopped reading`, "warn");
    registry.add(connection);
    let response;
    try {
      response = await connection.hub.initialize(request);
    } catch (error) {
      registry.remove(connection);
      connection.close();
      throw error;
    }
    if (this.#options.closing()) {
      // Shutdown came while the agent answered: the connection detaches like the others.
      registry.remove(connection);
      connection.detach();
      throw Errors.shuttingDown();
    }
    if (res.destroyed || response.error !== undefined) {
      // The client left before the answer (nobody knows this connection's
      // id), or the agent could not initialize: no connection is kept.
      registry.remove(connection);
      connection.close();
      if (response.error !== undefined) throw Errors.agentUnavailable(response.error.message);
      return;
    }
    // Spec, POST /acp: the result carries `connectionId` as well as the header;
    // `_meta.acpRemote.resumableStreams` offers Last-Event-ID (the RFD's v2 item).
    const answer = isRecord(response.result)
      ? { ...response, result: { ...response.result, connectionId: connection.connectionId, _meta: offerResumption(response.result["_meta"]) } }
      : response;
    const body = JSON.stringify(answer);
    res.writeHead(200, {
      [Header.ContentType]: MediaType.Json,
      [Header.ConnectionId]: connection.connectionId,
      [Header.SetCookie]: this.#options.affinityCookie,
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
    });
    res.end(body);
  }

  #checkSession(
    connection: HttpConnection,
    message: JsonRpcMessage,
    sessionHeader: string | undefined,
    method: string | undefined,
  ): void {
    if (sessionHeader === undefined) return;
    const access = connection.hub?.sessionAccess(sessionHeader) ?? "unknown";
    if (access === "unknown") throw Errors.unknownSession();
    if (access === "loadable" && !(method !== undefined && REATTACH_METHODS.has(method))) throw Errors.sessionNotAttached();
    const inParams = paramsSessionId(message);
    if (inParams !== undefined && inParams !== sessionHeader) throw Errors.sessionIdMismatch();
    // A response names its session by the stream its request came on.
    const requestSession = isResponse(message) && message.id !== null ? connection.sessionOfRequest(message.id) : undefined;
    if (requestSession !== undefined && requestSession !== sessionHeader) throw Errors.sessionIdMismatch();
  }
}

/** The initialize result's `_meta`, with the offer of resumable streams added to the server's own key. */
function offerResumption(meta: unknown): Record<string, unknown> {
  const all = isRecord(meta) ? meta : {};
  const ours = all[AcpExt.metaKey];
  const own = isRecord(ours) ? ours : {};
  return { ...all, [AcpExt.metaKey]: { ...own, [AcpExt.resumableStreams]: true } };
}

/**
 * The number of the last event a resuming reader got, from its
 * `Last-Event-ID`; undefined for a reader that does not resume. An id of
 * another stream (another session's, another connection's, or a server's
 * before a restart), or one whose followers are no longer kept, answers 410:
 * the reader can only catch up with session/load (MCP's EventStore scopes ids
 * to their stream the same way; an id never selects the stream it replays).
 */
function resumePoint(stream: OutboundStream, lastEventId: string | undefined): number | undefined {
  if (lastEventId === undefined) return undefined;
  const prefix = `${stream.tag}-`;
  const digits = lastEventId.startsWith(prefix) ? lastEventId.slice(prefix.length) : "";
  if (!stream.resumable || !/^[0-9]{1,15}$/.test(digits)) throw Errors.cannotResume("Last-Event-ID is not an id of this stream");
  const after = Number(digits);
  if (!stream.keeps(after)) throw Errors.cannotResume("the events after Last-Event-ID are no longer kept");
  return after;
}

/**
 * After a 413 the rest of the body is not read: HTTP/1.1 closes the socket
 * once the answer is out, HTTP/2 resets only this stream.
 */
function stopReading(req: HttpRequest, res: HttpResponse): void {
  if (req.httpVersionMajor < 2) res.setHeader("connection", "close");
  res.once("finish", () => {
    if (req.httpVersionMajor >= 2) req.destroy();
  });
}
