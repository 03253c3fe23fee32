// Server-Sent Events for `stream: true`: one `data: <chunk>` event per
// completion chunk, ending with `data: [DONE]` as OpenAI-compatible clients
// expect (design: Deferred completions, decision 5). The events go through
// the bounded SSE sink /acp uses (../acp/sse.ts): chunks wait here while the
// client's socket is full, and a client that stops reading is cut off once
// the queue passes its bounds, so a stalled reader costs its own response
// only, never the server's memory or a backend slot.
import type { HttpResponse } from "../http/types.ts";
import { SseSink } from "../http/sse-sink.ts";
import type { ErrorBody } from "./errors.ts";

export interface EventStreamLimits {
  /** Chunks queued while the client does not read; one more cuts it off. */
  maxQueuedChunks: number;
  /** Bytes of queued chunks; more cuts the client off. */
  maxQueuedBytes: number;
  /** After the last chunk, how long the client has to take what is queued before it is cut off, in milliseconds. */
  drainTimeoutMs: number;
  /** Interval of keep-alive comments, in milliseconds. */
  keepAliveMs: number;
}

const DONE = "[DONE]";

export class EventStream {
  readonly #sink: SseSink;
  readonly #limits: EventStreamLimits;
  readonly #queue: string[] = [];
  #queuedBytes = 0;
  #blocked = false;
  #closed = false;
  /** Called when everything queued was written, or the response closed. */
  #onIdle: (() => void) | undefined;
  /** Called once when the client is cut off as stalled (for logs and tests). */
  onCutOff: ((queued: { chunks: number; bytes: number }) => void) | undefined;

  constructor(res: HttpResponse, limits: EventStreamLimits) {
    this.#limits = limits;
    this.#sink = new SseSink(res, {
      keepAliveMs: limits.keepAliveMs,
      onDrain: () => {
        this.#blocked = false;
        this.#flush();
      },
      onClose: () => {
        this.#closed = true;
        this.#clear();
        this.#onIdle?.();
      },
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(data: unknown): void {
    this.#push(JSON.stringify(data));
  }

  /** An error after the stream began: OpenAI's clients raise an event carrying `error`. */
  error(body: ErrorBody): void {
    this.send(body);
  }

  /**
   * Writes `[DONE]` and ends the response once the client took what is
   * queued; a client that does not within `drainTimeoutMs` is cut off.
   */
  async end(): Promise<void> {
    this.#push(DONE);
    if (this.#closed) return;
    if (this.#queue.length > 0) {
      const drained = new Promise<void>((resolve) => (this.#onIdle = resolve));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), this.#limits.drainTimeoutMs);
      });
      const outcome = await Promise.race([drained, timedOut]);
      clearTimeout(timer);
      this.#onIdle = undefined;
      if (outcome === "timeout") return this.#cutOff();
    }
    this.#closed = true;
    this.#sink.end();
  }

  #push(json: string): void {
    if (this.#closed) return;
    this.#queue.push(json);
    this.#queuedBytes += Buffer.byteLength(json);
    this.#flush();
    if (this.#queue.length > this.#limits.maxQueuedChunks || this.#queuedBytes > this.#limits.maxQueuedBytes) this.#cutOff();
  }

  #flush(): void {
    while (!this.#closed && !this.#blocked && this.#queue.length > 0) {
      const json = this.#queue.shift() as string;
      this.#queuedBytes -= Buffer.byteLength(json);
      if (!this.#sink.write(json)) this.#blocked = true;
    }
    if (this.#queue.length === 0) this.#onIdle?.();
  }

  // The client is not reading: drop what it has not taken and the response with
  // it (the response's "close" aborts the completion and frees its slot).
  #cutOff(): void {
    if (this.#closed) return;
    const queued = { chunks: this.#queue.length, bytes: this.#queuedBytes };
    this.#closed = true;
    this.#clear();
    this.#sink.abort();
    this.onCutOff?.(queued);
  }

  #clear(): void {
    this.#queue.length = 0;
    this.#queuedBytes = 0;
  }
}
