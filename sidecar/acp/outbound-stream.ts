// One outbound stream of server-to-client messages: a connection stream, a
// session stream (Streamable HTTP) or a WebSocket. Messages queue here until
// a reader attaches (a session stream may get messages before the client's
// GET), and while the reader's socket is full (backpressure). The queue is
// bounded: a reader that stops reading is cut off once the bound is hit, so a
// stalled client costs its own stream only, never the server's memory. A
// reader that keeps reading while an agent gets ahead of it is not stalled:
// past the message bound it is cut off only once it has taken nothing for
// `stallMs`; the byte bound cuts at once.
import { readLine } from "../../common/ndjson.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { DEFAULT_OUTBOUND_STALL_MS } from "../limits.ts";

/** Where a stream writes: an SSE response or a WebSocket. */
export interface OutboundSink {
  /** Writes one serialized message; false when the sink is full and the stream must wait for `resume()`. */
  write(json: string): boolean;
  /** Ends the sink after what it holds is written (stream closed, server shutdown). */
  end(): void;
  /** Drops the sink at once, unsent bytes and all: its reader stopped reading. */
  abort(): void;
}

export interface OutboundLimits {
  maxQueuedMessages: number;
  maxQueuedBytes: number;
  /** Past maxQueuedMessages, how long the reader may take nothing before it is cut off, in milliseconds (DEFAULT_OUTBOUND_STALL_MS). */
  stallMs?: number;
}

export class OutboundStream {
  readonly #limits: OutboundLimits;
  /**
   * Queued messages from #head on (taken by moving #head: `shift()` copies
   * the whole rest of a long array, which made draining a long queue
   * quadratic).
   */
  #queue: string[] = [];
  /** The byte length of each queued message, so that it is measured once. */
  #sizes: number[] = [];
  #head = 0;
  #queuedBytes = 0;
  #sink: OutboundSink | undefined;
  #blocked = false;
  /** When the sink last answered "full" (performance.now()); it has taken nothing since while #blocked. */
  #blockedSince = 0;
  /** Armed while the queue is past the message bound behind a reader that may still be reading. */
  #stallTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Called when a reader is cut off (queue bound hit), for logs and tests. */
  onCutOff: ((queued: { messages: number; bytes: number }) => void) | undefined;

  constructor(limits: OutboundLimits) {
    this.#limits = limits;
  }

  get attached(): boolean {
    return this.#sink !== undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get queuedMessages(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues one message and writes what the sink takes. Messages after close() are dropped. */
  push(message: JsonRpcMessage): void {
    if (this.#closed) return;
    // A notification relayed as an agent wrote it goes out in the agent's own text.
    const json = readLine(message) ?? JSON.stringify(message);
    const sink = this.#sink;
    // Nothing waits and the sink takes writes: straight through.
    if (sink !== undefined && !this.#blocked && this.queuedMessages === 0) {
      if (!sink.write(json)) this.#block();
      return;
    }
    const size = Buffer.byteLength(json);
    this.#queue.push(json);
    this.#sizes.push(size);
    this.#queuedBytes += size;
    this.#flush();
    this.#checkBounds();
  }

  /** Attaches a reader; false when one is attached already (the caller answers 409). */
  attach(sink: OutboundSink): boolean {
    if (this.#closed || this.#sink !== undefined) return false;
    this.#sink = sink;
    this.#blocked = false;
    this.#flush();
    return true;
  }

  /** The reader went away (its request or socket closed); later messages queue for the next one. */
  detach(sink: OutboundSink): void {
    if (this.#sink !== sink) return;
    this.#sink = undefined;
    this.#blocked = false;
    this.#disarm();
  }

  /** The sink drained: write what is queued. */
  resume(): void {
    this.#blocked = false;
    this.#flush();
  }

  /** Ends the reader and drops what is queued; the stream takes no more messages. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const sink = this.#sink;
    this.#sink = undefined;
    this.#clear();
    this.#disarm();
    sink?.end();
  }

  #flush(): void {
    const sink = this.#sink;
    while (sink !== undefined && !this.#blocked && this.#head < this.#queue.length && this.#sink === sink) {
      const json = this.#queue[this.#head] as string;
      this.#queuedBytes -= this.#sizes[this.#head] as number;
      this.#head += 1;
      if (!sink.write(json)) this.#block();
    }
    this.#compact();
  }

  /** Drops the taken part of the queue once it is all of it, or most of a long one. */
  #compact(): void {
    if (this.#head === 0) return;
    if (this.#head === this.#queue.length) return this.#clear();
    if (this.#head < 1024 || this.#head * 2 < this.#queue.length) return;
    this.#queue = this.#queue.slice(this.#head);
    this.#sizes = this.#sizes.slice(this.#head);
    this.#head = 0;
  }

  #block(): void {
    this.#blocked = true;
    this.#blockedSince = performance.now();
  }

  /**
   * Past the byte bound, or past the message bound with no reader, the queue
   * goes at once. Past the message bound behind a reader, the reader goes once
   * it has taken nothing for `stallMs` (checked again when that time is up, as
   * no further message may come).
   */
  #checkBounds(): void {
    const { maxQueuedMessages, maxQueuedBytes } = this.#limits;
    if (this.#queuedBytes > maxQueuedBytes) return this.#cutOff();
    if (this.queuedMessages <= maxQueuedMessages) return;
    if (this.#sink === undefined) return this.#cutOff();
    const stallMs = this.#limits.stallMs ?? DEFAULT_OUTBOUND_STALL_MS;
    const waited = performance.now() - this.#blockedSince;
    if (waited >= stallMs) return this.#cutOff();
    if (this.#stallTimer !== undefined) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      if (!this.#closed && this.#blocked) this.#checkBounds();
    }, stallMs - waited);
    // A stream does not hold the process open.
    this.#stallTimer.unref();
  }

  #disarm(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }

  // Over the bound. With a reader, it is not reading: end it (v1 has no
  // resumption, so what it missed is gone, spec "Durability" 7). Without one,
  // nobody came for these messages: drop them and keep taking new ones for a
  // reader that may still come.
  #cutOff(): void {
    const queued = { messages: this.queuedMessages, bytes: this.#queuedBytes };
    const sink = this.#sink;
    this.#sink = undefined;
    this.#blocked = false;
    this.#disarm();
    this.#clear();
    sink?.abort();
    this.onCutOff?.(queued);
  }

  #clear(): void {
    this.#queue = [];
    this.#sizes = [];
    this.#head = 0;
    this.#queuedBytes = 0;
  }
}
