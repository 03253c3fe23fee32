// One outbound stream of server-to-client messages: a connection stream, a
// session stream (Streamable HTTP) or a WebSocket. Messages queue here until
// a reader attaches (a session stream may get messages before the client's
// GET), and while the reader's socket is full (backpressure). The queue is
// bounded: a reader that stops reading is cut off once the bound is hit, so a
// stalled client costs its own stream only, never the server's memory. A
// reader that keeps reading while an agent gets ahead of it is not stalled:
// past the message bound it is cut off only once it has taken nothing for
// `stallMs`; the byte bound cuts at once.
//
// An SSE stream also keeps what it wrote, within `replayEvents` and
// `replayChars`, numbered in the order pushed: a reader that comes back with
// the number of the last event it got (`Last-Event-ID`) is sent what follows
// it again, since what a cut stream wrote into a dead socket never arrived.
// What all streams of a server keep is bounded together too (ReplayBudget).
//
// Past its high-water mark, a stream reports itself to the agent whose
// message it is being given (common/read-pacing.ts): that agent's next read
// waits until the reader took the backlog, within a bound. A reader that
// keeps up thus sets the pace, and a flood waits in the agent's pipe instead
// of this queue.
import { lineReadFor } from "../../common/ndjson.ts";
import type { OutboundSink } from "../http/outbound-sink.ts";
import { type Backlog, reportBacklog } from "../../common/read-pacing.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { DEFAULT_OUTBOUND_HIGH_WATER_BYTES, DEFAULT_OUTBOUND_STALL_MS } from "../limits.ts";
import type { ReplayBudget, ReplayLog } from "./replay-budget.ts";

export interface OutboundLimits {
  maxQueuedMessages: number;
  maxQueuedBytes: number;
  /** Past maxQueuedMessages, how long the reader may take nothing before it is cut off, in milliseconds (DEFAULT_OUTBOUND_STALL_MS). */
  stallMs?: number;
  /** Queued bytes past which the stream holds a backlog its agent's reads wait for (DEFAULT_OUTBOUND_HIGH_WATER_BYTES). */
  highWaterBytes?: number;
  /** Written messages kept for a reader that resumes (DEFAULT_SSE_REPLAY_EVENTS); none when absent. */
  replayEvents?: number;
  /** The same bound in characters of JSON text (DEFAULT_SSE_REPLAY_CHARS). */
  replayChars?: number;
  /** What the server's streams keep together (DEFAULT_SSE_REPLAY_BUDGET_CHARS); unbounded when absent. */
  replayBudget?: ReplayBudget;
}

/** How `attach` went: attached, another reader holds the stream (409), or the resume point is not kept (410). */
export type AttachResult = "attached" | "busy" | "not-kept";

export class OutboundStream implements ReplayLog, Backlog {
  readonly #limits: OutboundLimits;
  readonly #highWaterBytes: number;
  readonly #replayEvents: number;
  readonly #replayChars: number;
  /**
   * Messages by number: #log[i] is number #firstSeq + i. Those before #kept
   * are forgotten, those in [#kept, #head) were written and are kept for a
   * resume, those from #head on wait for the sink. Positions move instead of
   * `shift()`, which copies the whole rest of a long array and made draining
   * a long queue quadratic.
   */
  #log: (string | undefined)[] = [];
  /** The byte length of each waiting message, so that it is measured once. */
  #sizes: number[] = [];
  #firstSeq = 1;
  #kept = 0;
  #head = 0;
  #keptChars = 0;
  #queuedBytes = 0;
  #sink: OutboundSink | undefined;
  #blocked = false;
  /** When the sink last answered "full" (performance.now()); it has taken nothing since while #blocked. */
  #blockedSince = 0;
  /** Armed while the queue is past the message bound behind a reader that may still be reading. */
  #stallTimer: NodeJS.Timeout | undefined;
  /** Called once the backlog is gone (see `whenRelieved`); made on first use, as most streams never hold one. */
  #relief: Set<() => void> | undefined;
  #closed = false;
  /** Called when a reader is cut off (queue bound hit), for logs and tests. */
  onCutOff: ((queued: { messages: number; bytes: number }) => void) | undefined;

  /**
   * Names this stream in its event ids (`<tag>-<number>`), so that an id of
   * another stream, session or connection is told apart from one of its own.
   */
  readonly tag: string;

  constructor(limits: OutboundLimits, tag = "") {
    this.#limits = limits;
    this.tag = tag;
    this.#replayEvents = limits.replayEvents ?? 0;
    this.#replayChars = limits.replayChars ?? 0;
    this.#highWaterBytes = limits.highWaterBytes ?? DEFAULT_OUTBOUND_HIGH_WATER_BYTES;
  }

  get attached(): boolean {
    return this.#sink !== undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get queuedMessages(): number {
    return this.#log.length - this.#head;
  }

  /** Characters of the written messages kept for a resume. */
  get keptChars(): number {
    return this.#keptChars;
  }

  /** A reader is attached and more than the high-water mark waits for it. */
  get backlogged(): boolean {
    return this.#sink !== undefined && this.#queuedBytes > this.#highWaterBytes;
  }

  whenRelieved(listener: () => void): () => void {
    const relief = (this.#relief ??= new Set());
    relief.add(listener);
    return () => relief.delete(listener);
  }

  /** Whether a reader can resume this stream after an event it got. */
  get resumable(): boolean {
    return this.#replayEvents > 0;
  }

  /** Queues one message and writes what the sink takes. Messages after close() are dropped. */
  push(message: JsonRpcMessage): void {
    if (this.#closed) return;
    // A notification relayed as an agent wrote it goes out in the agent's own text.
    const json = lineReadFor(message) ?? JSON.stringify(message);
    const seq = this.#firstSeq + this.#log.length;
    const sink = this.#sink;
    // Nothing waits and the sink takes writes: straight through.
    if (sink !== undefined && !this.#blocked && this.#head === this.#log.length) {
      if (this.#replayEvents === 0) {
        // Nothing is kept: the log stays empty and the numbering moves on.
        this.#firstSeq += 1;
      } else {
        this.#log.push(json);
        this.#sizes.push(0);
        this.#head += 1;
        this.#keep(json);
      }
      if (!sink.write(json, seq)) this.#block();
      return;
    }
    const size = Buffer.byteLength(json);
    this.#log.push(json);
    this.#sizes.push(size);
    this.#queuedBytes += size;
    this.#flush();
    this.#checkBounds();
    if (this.backlogged) reportBacklog(this);
  }

  /**
   * Attaches a reader; "busy" when one is attached already (the caller
   * answers 409). With `after`, the number of the last message the reader
   * got, what was written after it is sent again first; "not-kept" when
   * that is no longer known (too old, or never written here).
   */
  attach(sink: OutboundSink, after?: number): AttachResult {
    if (this.#closed || this.#sink !== undefined) return "busy";
    if (after !== undefined && !this.#rewind(after)) return "not-kept";
    this.#sink = sink;
    this.#blocked = false;
    sink.start?.(this.#firstSeq + this.#head - 1);
    this.#flush();
    return "attached";
  }

  /** The reader went away (its request or socket closed); later messages queue for the next one. */
  detach(sink: OutboundSink): void {
    if (this.#sink !== sink) return;
    this.#sink = undefined;
    this.#blocked = false;
    this.#disarm();
    this.#relieve();
  }

  /**
   * Ends the attached reader and lets the next one attach: a reader resuming
   * with Last-Event-ID has lost this one, even if the server has not seen it
   * close yet (HTTP/1.1 learns of a dead socket only on a later write).
   */
  dropReader(): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    this.detach(sink);
    sink.end();
  }

  /**
   * The sink drained: write what is queued. With `sink`, only if that sink is
   * still the reader: a reader that was dropped can drain late, and must not
   * resume the one that took its place while that one's socket is full.
   */
  resume(sink?: OutboundSink): void {
    if (sink !== undefined && sink !== this.#sink) return;
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
    this.#relieve();
    sink?.end();
  }

  /**
   * Whether a reader that got message `after` can resume here: every message
   * written after it is still kept (none may have been written yet). A number
   * past what was written was never sent to that reader.
   */
  keeps(after: number): boolean {
    const index = after + 1 - this.#firstSeq;
    return !this.#closed && Number.isSafeInteger(index) && index >= this.#kept && index <= this.#head;
  }

  /** Moves the write position back to just after message `after`; false when that is not kept. */
  #rewind(after: number): boolean {
    if (!this.keeps(after)) return false;
    const index = after + 1 - this.#firstSeq;
    let unkept = 0;
    for (let i = index; i < this.#head; i++) {
      const json = this.#log[i] as string;
      const size = Buffer.byteLength(json);
      this.#sizes[i] = size;
      this.#queuedBytes += size;
      unkept += json.length;
    }
    this.#changeKept(-unkept);
    this.#head = index;
    return true;
  }

  #flush(): void {
    const sink = this.#sink;
    while (sink !== undefined && !this.#blocked && this.#head < this.#log.length && this.#sink === sink) {
      const json = this.#log[this.#head] as string;
      const seq = this.#firstSeq + this.#head;
      this.#queuedBytes -= this.#sizes[this.#head] as number;
      this.#head += 1;
      // Keeping may compact the log, which renumbers positions: seq is taken first.
      this.#keep(json);
      if (!sink.write(json, seq)) this.#block();
    }
    this.#compact();
    this.#relieve();
  }

  /** Tells the waiting readers once the backlog is gone. */
  #relieve(): void {
    const relief = this.#relief;
    if (relief === undefined || relief.size === 0 || this.backlogged) return;
    const listeners = [...relief];
    relief.clear();
    for (const listener of listeners) listener();
  }

  /** A message was written: keep it for a resume, and forget the oldest past the replay bounds. */
  #keep(json: string): void {
    if (this.#replayEvents === 0) {
      this.#kept = this.#head;
      return;
    }
    let delta = json.length;
    this.#keptChars += json.length;
    while (this.#kept < this.#head && (this.#head - this.#kept > this.#replayEvents || this.#keptChars > this.#replayChars)) {
      delta -= this.#forgetKept();
    }
    if (this.#kept >= 1024 && this.#kept * 2 >= this.#log.length) this.#compact();
    // Told last: the budget may trim this very log.
    this.#limits.replayBudget?.changed(this, delta);
  }

  /** The server's replay budget is spent: forget the oldest kept messages until at most `chars` are kept. */
  forgetOldest(chars: number): void {
    let delta = 0;
    while (this.#kept < this.#head && this.#keptChars > chars) delta -= this.#forgetKept();
    if (this.#kept >= 1024 && this.#kept * 2 >= this.#log.length) this.#compact();
    if (delta !== 0) this.#limits.replayBudget?.changed(this, delta);
  }

  /** Forgets the oldest kept message; its length. */
  #forgetKept(): number {
    const length = (this.#log[this.#kept] as string).length;
    this.#keptChars -= length;
    this.#log[this.#kept] = undefined;
    this.#kept += 1;
    return length;
  }

  /** Kept characters change by `delta` outside of #keep (a rewind, a clear): the budget is told. */
  #changeKept(delta: number): void {
    this.#keptChars += delta;
    if (delta !== 0) this.#limits.replayBudget?.changed(this, delta);
  }

  /** Drops the forgotten part of the log once it is all of it, or most of a long one. */
  #compact(): void {
    const drop = this.#kept;
    if (drop === 0) return;
    if (drop === this.#log.length) {
      this.#firstSeq += drop;
      this.#log = [];
      this.#sizes = [];
      this.#kept = 0;
      this.#head = 0;
      return;
    }
    if (drop < 1024 || drop * 2 < this.#log.length) return;
    this.#log = this.#log.slice(drop);
    this.#sizes = this.#sizes.slice(drop);
    this.#firstSeq += drop;
    this.#kept = 0;
    this.#head -= drop;
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

  // Over the bound. With a reader, it is not reading: end it; what it missed
  // is gone, kept messages too, so a resume answers 410 and the client loads
  // the session (spec "Durability" 7). Without one, nobody came for these
  // messages: drop them and keep taking new ones for a reader that may still
  // come.
  #cutOff(): void {
    const queued = { messages: this.queuedMessages, bytes: this.#queuedBytes };
    const sink = this.#sink;
    this.#sink = undefined;
    this.#blocked = false;
    this.#disarm();
    this.#clear();
    this.#relieve();
    sink?.abort();
    this.onCutOff?.(queued);
  }

  /** Forgets everything, kept messages included; the numbering goes on. */
  #clear(): void {
    this.#firstSeq += this.#log.length;
    this.#log = [];
    this.#sizes = [];
    this.#kept = 0;
    this.#head = 0;
    this.#changeKept(-this.#keptChars);
    this.#queuedBytes = 0;
  }
}
