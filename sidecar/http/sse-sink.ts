// A Server-Sent Events response as an outbound sink (design: decision 6):
// `data: <one JSON-RPC message>\n\n`, the default event type, and a comment
// line as keep-alive. A stream that can be resumed gives each event an
// `id: <stream tag>-<number>` line, which the reader sends back as
// `Last-Event-ID` when it opens the stream again. Headers are flushed at once because clients (the SDK's
// among them) wait for the session stream's headers before they POST.
//
// On HTTP/2 the events are written on the `Http2Stream` itself: the
// compatibility response adds a layer (state checks, relayed `drain` and
// `close` events) to every write of a stream that lives for hours.
import type { ServerResponse } from "node:http";
import { Http2ServerResponse } from "node:http2";
import type { HttpResponse } from "./types.ts";
import type { OutboundSink } from "./outbound-sink.ts";
import { Header, MediaType } from "../../protocol/acp.ts";
import { DEFAULT_SSE_WRITE_CHARS } from "../limits.ts";
import { decimalText } from "../../common/decimal-text.ts";

const KEEP_ALIVE = ":\n\n";
/** What frames one message as an event: `data: ` before it and the blank line after, in characters. */
const EVENT_FRAMING_CHARS = "data: \n\n".length;

/** What the events are written on: the HTTP/2 stream, or the HTTP/1.1 response. */
interface EventTarget {
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  on(event: "drain", listener: () => void): unknown;
  once(event: "close", listener: () => void): unknown;
}

export class SseSink implements OutboundSink {
  readonly #out: EventTarget;
  readonly #timer: NodeJS.Timeout;
  #full = false;
  #ended = false;
  /** Messages handed over in this event-loop turn, written together as events on the next tick. */
  #pending: string[] = [];
  /** Characters of the pending events, framing included; at DEFAULT_SSE_WRITE_CHARS the stream waits. */
  #pendingChars = 0;
  #flushQueued = false;
  /** `id: <tag>-`, when events carry ids. */
  readonly #idPrefix: string | undefined;
  readonly #onDrain: () => void;

  /**
   * Starts the stream: 200, event-stream headers, flushed. `onDrain` is called
   * when a full response can take writes again, `onClose` once when the
   * response is gone (client left, or `end()`).
   */
  constructor(
    res: HttpResponse,
    options: {
      keepAliveMs: number;
      headers?: Record<string, string>;
      /** The stream's tag: events carry `id: <tag>-<number>`. None: events carry no id. */
      eventTag?: string;
      onDrain: () => void;
      onClose: () => void;
    },
  ) {
    res.writeHead(200, {
      ...options.headers,
      [Header.ContentType]: MediaType.EventStream,
      "cache-control": "no-cache, no-transform",
      // Proxies that buffer responses would hold the stream back.
      "x-accel-buffering": "no",
    });
    res.flushHeaders?.();
    this.#idPrefix = options.eventTag === undefined ? undefined : `id: ${options.eventTag}-`;
    this.#out = res instanceof Http2ServerResponse ? res.stream : (res as ServerResponse);
    this.#onDrain = options.onDrain;
    this.#out.on("drain", () => {
      this.#full = false;
      this.#onDrain();
    });
    this.#out.once("close", () => {
      this.#ended = true;
      this.#pending = [];
      clearInterval(this.#timer);
      options.onClose();
    });
    // The keep-alive must not hold the process open (unref).
    this.#timer = setInterval(() => {
      if (!this.#full && !this.#ended) this.#full = !this.#out.write(KEEP_ALIVE);
    }, options.keepAliveMs);
    this.#timer.unref();
  }

  /**
   * The updates of one agent read arrive in one event-loop turn; their events
   * are gathered and written as one chunk on the next tick, so that a burst
   * costs one write instead of one system call per event, and a lone event
   * leaves as soon as the code that sent it is done. A batch is bounded
   * (DEFAULT_SSE_WRITE_CHARS): at the bound the stream waits, and is resumed
   * once the batch is written, at once if the socket took it, on `drain` if
   * not. A backlog built up behind a slow reader (an HTTP/2 client's flow
   * control window lets through 64 KiB at a time by default) thus leaves a
   * batch at a time instead of being joined into one string of megabytes,
   * which cost a quarter of the server's CPU in an h2c flood.
   */
  write(json: string, seq = 0): boolean {
    if (this.#ended) return true;
    // The number is written with decimalText: V8's own conversion would carry each id into the old generation.
    const event = this.#idPrefix === undefined ? json : `${this.#idPrefix}${decimalText(seq)}\ndata: ${json}`;
    this.#pending.push(event);
    this.#pendingChars += event.length + EVENT_FRAMING_CHARS;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      process.nextTick(() => this.#flushPending());
    }
    if (this.#pendingChars >= DEFAULT_SSE_WRITE_CHARS) this.#full = true;
    return !this.#full;
  }

  /**
   * A stream whose events carry ids opens with an event that carries only
   * an id (as MCP's streams do): a reader cut before the first message then
   * has a `Last-Event-ID` to resume with, where it would otherwise open the
   * stream anew and get 409 while the server still holds the cut reader. Its
   * data is empty, which readers skip (the SDK's, ours, eventsource-parser's
   * users); an event with no data line at all would not hand its id over.
   */
  start(after: number): void {
    if (this.#idPrefix === undefined || this.#ended) return;
    this.#pending.push(`${this.#idPrefix}${decimalText(after)}\ndata:`);
    this.#pendingChars += this.#idPrefix.length + EVENT_FRAMING_CHARS;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      process.nextTick(() => this.#flushPending());
    }
  }

  end(): void {
    if (this.#ended) return;
    // What is gathered is written last; the stream is not resumed for more.
    this.#flushPending(false);
    this.#ended = true;
    clearInterval(this.#timer);
    this.#out.end();
  }

  abort(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = [];
    clearInterval(this.#timer);
    // An HTTP/2 stream is reset; an HTTP/1.1 response takes its socket along.
    this.#out.destroy();
  }

  /** Writes the pending events; with `resume`, a stream that waited at the bound is resumed once the socket took them. */
  #flushPending(resume = true): void {
    this.#flushQueued = false;
    if (this.#ended || this.#pending.length === 0) return;
    const pending = this.#pending;
    const atBound = this.#pendingChars >= DEFAULT_SSE_WRITE_CHARS;
    this.#pending = [];
    this.#pendingChars = 0;
    // One `data:` line per message (JSON text has no raw line break), each after
    // its `id:` line when events carry ids, framed in one string.
    const events = this.#idPrefix === undefined
      ? `data: ${pending.length === 1 ? (pending[0] as string) : pending.join("\n\ndata: ")}`
      : pending.length === 1 ? (pending[0] as string) : pending.join("\n\n");
    this.#full = !this.#out.write(`${events}\n\n`);
    // The socket took a batch the stream waited on: it writes its next one now; otherwise `drain` resumes it.
    if (atBound && resume && !this.#full) this.#onDrain();
  }
}
