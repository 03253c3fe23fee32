// A Server-Sent Events response as an outbound sink (design: decision 6):
// `data: <one JSON-RPC message>\n\n`, the default event type, and a comment
// line as keep-alive. Headers are flushed at once because clients (the SDK's
// among them) wait for the session stream's headers before they POST.
import type { ServerResponse } from "node:http";
import { Http2ServerResponse } from "node:http2";
import type { HttpResponse } from "../server/http/types.ts";
import type { OutboundSink } from "./outbound-stream.ts";
import { Header, MediaType } from "../../protocol/acp.ts";

const KEEP_ALIVE = ":\n\n";

export class SseSink implements OutboundSink {
  readonly #res: HttpResponse;
  readonly #timer: NodeJS.Timeout;
  #full = false;
  #ended = false;
  /** Events handed over in this event-loop turn, written together on the next tick. */
  #pending: string[] = [];

  /**
   * Starts the stream: 200, event-stream headers, flushed. `onDrain` is called
   * when a full response can take writes again, `onClose` once when the
   * response is gone (client left, or `end()`).
   */
  constructor(
    res: HttpResponse,
    options: { keepAliveMs: number; headers?: Record<string, string>; onDrain: () => void; onClose: () => void },
  ) {
    this.#res = res;
    res.writeHead(200, {
      ...options.headers,
      [Header.ContentType]: MediaType.EventStream,
      "cache-control": "no-cache, no-transform",
      // Proxies that buffer responses would hold the stream back.
      "x-accel-buffering": "no",
    });
    res.flushHeaders?.();
    res.on("drain", () => {
      this.#full = false;
      options.onDrain();
    });
    res.once("close", () => {
      this.#ended = true;
      clearInterval(this.#timer);
      options.onClose();
    });
    // The keep-alive must not hold the process open (unref).
    this.#timer = setInterval(() => {
      if (!this.#full && !this.#ended) this.#full = !this.#write(KEEP_ALIVE);
    }, options.keepAliveMs);
    this.#timer.unref();
  }

  /**
   * The updates of one agent read arrive in one event-loop turn; their events
   * are gathered and written as one chunk on the next tick, so that a burst
   * costs one write instead of one system call per event. "Full" comes only
   * from a real write, so a `drain` always follows it.
   */
  write(json: string): boolean {
    if (this.#ended) return true;
    if (this.#pending.push(`data: ${json}\n\n`) === 1) process.nextTick(() => this.#flushPending());
    return !this.#full;
  }

  end(): void {
    if (this.#ended) return;
    this.#flushPending();
    this.#ended = true;
    clearInterval(this.#timer);
    this.#res.end();
  }

  #flushPending(): void {
    if (this.#ended || this.#pending.length === 0) return;
    const chunk = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join("");
    this.#pending = [];
    this.#full = !this.#write(chunk);
  }

  abort(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = [];
    clearInterval(this.#timer);
    // An HTTP/2 stream is reset; an HTTP/1.1 response takes its socket along.
    const res = this.#res;
    if (res instanceof Http2ServerResponse) res.stream.destroy();
    else (res as ServerResponse).destroy();
  }

  #write(chunk: string): boolean {
    // Both response classes take a string; their write signatures differ only in overloads.
    return (this.#res.write as (chunk: string) => boolean)(chunk);
  }
}
