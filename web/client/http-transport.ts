// The Streamable HTTP profile of /acp over fetch, for when a WebSocket cannot
// be opened: `initialize` is answered in its POST, every other message is a
// POST answered 202, and what the server sends arrives on GET event streams,
// one for the connection and one per session (docs/transport.md).
import type { JsonRpcMessage, JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import { errorResponse, isRecord, isRequest, validateMessage } from "../../protocol/jsonrpc.ts";
import { acpUrl, authHeaders, type Endpoint } from "./endpoint.ts";
import { DEFAULT_STREAM_RESUMES } from "./limits.ts";
import { RpcError } from "./rpc.ts";
import { readEvents, SseEventTooLarge } from "./sse.ts";
import { UnauthorizedError, type Transport, type TransportEvents } from "./transport.ts";
import { Header, META_KEY, RESUMABLE_STREAMS } from "./wire.ts";
import type { Opened } from "./ws-transport.ts";

const JSON_TYPE = "application/json";
const EVENT_STREAM = "text/event-stream";

/** Whether an initialize result offers resuming streams (`_meta.acpRemote.resumableStreams`). */
function offersResumableStreams(result: unknown): boolean {
  const meta = isRecord(result) ? result["_meta"] : undefined;
  const own = isRecord(meta) ? meta[META_KEY] : undefined;
  return isRecord(own) && own[RESUMABLE_STREAMS] === true;
}

export async function openHttp(endpoint: Endpoint, events: TransportEvents, initialize: JsonRpcRequest): Promise<Opened> {
  const url = acpUrl(endpoint, "http");
  const response = await fetch(url, {
    method: "POST",
    headers: { ...authHeaders(endpoint), "Content-Type": JSON_TYPE, Accept: `${JSON_TYPE}, ${EVENT_STREAM}` },
    body: JSON.stringify(initialize),
  });
  if (response.status === 401) throw new UnauthorizedError();
  const body: unknown = await response.json().catch(() => null);
  const connectionId = response.headers.get(Header.ConnectionId);
  // The server answered with a JSON-RPC error (its agent cannot start, say): that is the reason to show.
  if (isRecord(body) && isRecord(body["error"])) {
    throw new RpcError({ code: Number(body["error"]["code"]), message: String(body["error"]["message"]) });
  }
  if (!response.ok || connectionId === null || !isRecord(body)) {
    throw new Error(`initialize failed (HTTP ${response.status})`);
  }
  const abort = new AbortController();
  let open = true;
  const base = { ...authHeaders(endpoint), [Header.ConnectionId]: connectionId };
  const resumable = offersResumableStreams(body["result"]);

  function end(how: "dropped" | "unauthorized"): void {
    if (!open) return;
    open = false;
    abort.abort();
    events.onClose(how);
  }

  function deliver(data: string): void {
    try {
      const checked = validateMessage(JSON.parse(data));
      if (checked.ok) events.onMessage(checked.message);
    } catch {
      // Not JSON: nothing to deliver.
    }
  }

  /**
   * One GET stream. When it ends or fails while the link is up, and the
   * server resumes streams, it is asked for again at once after the last
   * event read (Last-Event-ID) and misses nothing: the session stays as it is
   * shown. Otherwise, or when the server can no longer resume it (404: the
   * connection is gone; 410: the events are no longer kept), or after
   * `DEFAULT_STREAM_RESUMES` reopens in a row that brought no message, the
   * link ends, since messages would be lost from then on, and the page
   * reconnects and loads its session again.
   */
  function stream(sessionId?: string, resumeAfter?: string, reopens = 0): void {
    const headers: Record<string, string> = { ...base, Accept: EVENT_STREAM };
    if (sessionId !== undefined) headers[Header.SessionId] = sessionId;
    if (resumeAfter !== undefined) headers[Header.LastEventId] = resumeAfter;
    let lastEventId = resumeAfter;
    let emptyReopens = reopens;
    const onEvent = (data: string, id: string | undefined): void => {
      if (id !== undefined) lastEventId = id;
      // An event without data only gives an id to resume from (the server's
      // first event on a stream): no message, and no sign that the stream
      // carries messages again, so it leaves the count of reopens alone.
      if (data === "") return;
      emptyReopens = 0;
      deliver(data);
    };
    const ended = (error?: unknown): void => {
      if (!open) return;
      // An oversized event would come again on a resume.
      if (resumable && !(error instanceof SseEventTooLarge) && emptyReopens < DEFAULT_STREAM_RESUMES) {
        stream(sessionId, lastEventId, emptyReopens + 1);
        return;
      }
      end("dropped");
    };
    fetch(url, { headers, signal: abort.signal, cache: "no-store" })
      .then(async (res) => {
        if (res.status === 401) return end("unauthorized");
        if (!res.ok || res.body === null) return end("dropped");
        await readEvents(res.body, onEvent);
        ended();
      })
      .catch(ended);
  }

  function send(message: JsonRpcMessage, sessionId?: string): void {
    if (!open) return;
    const headers: Record<string, string> = { ...base, "Content-Type": JSON_TYPE, Accept: `${JSON_TYPE}, ${EVENT_STREAM}` };
    if (sessionId !== undefined) headers[Header.SessionId] = sessionId;
    fetch(url, { method: "POST", headers, body: JSON.stringify(message), signal: abort.signal })
      .then(async (res) => {
        if (res.status === 401) return end("unauthorized");
        // The connection is gone on the server (idle or restarted): a new one must be opened.
        if (res.status === 404 && !isRequest(message)) return end("dropped");
        if (res.ok) return;
        // A refused request is answered here, so its caller does not wait for an answer that will not come.
        if (isRequest(message)) {
          const reply: unknown = await res.json().catch(() => null);
          const error = isRecord(reply) && isRecord(reply["error"]) ? reply["error"] : { code: -32603, message: `HTTP ${res.status}` };
          events.onMessage(errorResponse(message.id, Number(error["code"]), String(error["message"])));
        }
      })
      .catch(() => end("dropped"));
  }

  stream();
  const transport: Transport = {
    profile: "http",
    send,
    openSession: (sessionId) => stream(sessionId),
    close() {
      open = false;
      abort.abort();
    },
  };
  return { transport, initialized: body as unknown as Opened["initialized"] };
}
