// The messages of an outbound stream that wait: for a reader to attach (a
// session stream may get messages before the client's GET), or while the
// reader's socket is full (backpressure). The queue is bounded: a reader that
// stops reading is cut off once the bound is hit, so a stalled client costs
// its own stream only, never the server's memory. A reader that keeps reading
// while an agent gets ahead of it is not stalled: past the message bound it is
// cut off only once it has taken nothing for `stallMs`; the byte bound cuts at
// once.
//
// Past its high-water mark, the queue reports itself to the agent whose
// message it is being given (common/read-pacing.ts): that agent's next read
// waits until the reader took the backlog, within a bound. A reader that keeps
// up thus sets the pace, and a flood waits in the agent's pipe instead of
// this queue.
//
// The stream (outbound-stream.ts) holds the reader and writes to it; it tells
// the queue whether a reader is attached and whether its socket is full, and
// the queue tells it when a bound is passed.
import type { Backlog } from "../../common/read-pacing.ts";
import { DEFAULT_OUTBOUND_HIGH_WATER_BYTES, DEFAULT_OUTBOUND_STALL_MS } from "../limits.ts";

export interface QueueLimits {
  /** Waiting messages past which the reader is cut off (DEFAULT_MAX_QUEUED_MESSAGES), in messages. */
  maxQueuedMessages: number;
  /** The same bound in bytes of JSON text (DEFAULT_MAX_QUEUED_BYTES), in bytes. */
  maxQueuedBytes: number;
  /** Past maxQueuedMessages, how long the reader may take nothing before it is cut off, in milliseconds (DEFAULT_OUTBOUND_STALL_MS). */
  stallMs?: number;
  /** Queued bytes past which the stream holds a backlog its agent's reads wait for (DEFAULT_OUTBOUND_HIGH_WATER_BYTES). */
  highWaterBytes?: number;
}

/** How much waited when a bound was passed, for logs and tests. */
export interface QueuedAmount {
  messages: number;
  bytes: number;
}

/**
 * Taken positions at the head of the queue past which its waiting part is
 * copied down, once it is at most half of the array; in messages.
 */
const COMPACT_AFTER_MESSAGES = 1024;

export class OutboundQueue implements Backlog {
  readonly #limits: QueueLimits;
  readonly #highWaterBytes: number;
  /** Called when a bound is passed: the stream cuts its reader off and clears the queue. */
  readonly #overflow: () => void;
  /**
   * Waiting messages, oldest first from #head. Positions move instead of
   * `shift()`, which copies the whole rest of a long array and made draining
   * a long queue quadratic.
   */
  #messages: (string | undefined)[] = [];
  /** The byte length of each waiting message, so that it is measured once. */
  #sizes: number[] = [];
  #head = 0;
  #queuedBytes = 0;
  #readerAttached = false;
  #blocked = false;
  /** When the reader last answered "full" (performance.now()); it has taken nothing since while #blocked. */
  #blockedSince = 0;
  /** Armed while the queue is past the message bound behind a reader that may still be reading. */
  #stallTimer: NodeJS.Timeout | undefined;
  /** Called once the backlog is gone (see `whenRelieved`); made on first use, as most queues never hold one. */
  #relief: Set<() => void> | undefined;

  constructor(limits: QueueLimits, overflow: () => void) {
    this.#limits = limits;
    this.#highWaterBytes = limits.highWaterBytes ?? DEFAULT_OUTBOUND_HIGH_WATER_BYTES;
    this.#overflow = overflow;
  }

  get queuedMessages(): number {
    return this.#messages.length - this.#head;
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** The reader's socket is full: nothing is taken until it drains. */
  get blocked(): boolean {
    return this.#blocked;
  }

  /** A reader is attached and more than the high-water mark waits for it. */
  get backlogged(): boolean {
    return this.#readerAttached && this.#queuedBytes > this.#highWaterBytes;
  }

  whenRelieved(listener: () => void): () => void {
    const relief = (this.#relief ??= new Set());
    relief.add(listener);
    return () => relief.delete(listener);
  }

  /** A reader attached; it takes writes until it answers "full". */
  readerAttached(): void {
    this.#readerAttached = true;
    this.#blocked = false;
  }

  /** The reader is gone (detached, cut off, closed): what waits, waits for the next one. */
  readerDetached(): void {
    this.#readerAttached = false;
    this.#blocked = false;
    this.#disarm();
    this.relieve();
  }

  /** The reader answered "full": its socket holds what it can. */
  block(): void {
    this.#blocked = true;
    this.#blockedSince = performance.now();
  }

  /** The reader's socket drained: it takes writes again. */
  unblock(): void {
    this.#blocked = false;
  }

  /** Queues `json` behind what waits. */
  add(json: string): void {
    const size = Buffer.byteLength(json);
    this.#messages.push(json);
    this.#sizes.push(size);
    this.#queuedBytes += size;
  }

  /** Takes the oldest waiting message; only while `queuedMessages` > 0. */
  take(): string {
    const head = this.#head;
    const json = this.#messages[head] as string;
    this.#messages[head] = undefined;
    this.#queuedBytes -= this.#sizes[head] as number;
    this.#head = head + 1;
    this.#compact();
    return json;
  }

  /** Puts `messages` back in front of what waits, oldest first: a reader that resumes gets them again. */
  putBack(messages: readonly string[]): void {
    if (messages.length === 0) return;
    const sizes = messages.map((json) => Buffer.byteLength(json));
    for (const size of sizes) this.#queuedBytes += size;
    this.#messages = [...messages, ...this.#messages.slice(this.#head)];
    this.#sizes = [...sizes, ...this.#sizes.slice(this.#head)];
    this.#head = 0;
  }

  /** Drops every waiting message. The arrays are emptied in place: a queue that drains after each message allocates nothing. */
  clear(): void {
    this.#messages.length = 0;
    this.#sizes.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
  }

  /**
   * Past the byte bound, or past the message bound with no reader, the queue
   * overflows at once. Past the message bound behind a reader, it overflows
   * once the reader has taken nothing for `stallMs` (checked again when that
   * time is up, as no further message may come).
   */
  checkBounds(): void {
    const { maxQueuedMessages, maxQueuedBytes } = this.#limits;
    if (this.#queuedBytes > maxQueuedBytes) return this.#overflow();
    if (this.queuedMessages <= maxQueuedMessages) return;
    if (!this.#readerAttached) return this.#overflow();
    const stallMs = this.#limits.stallMs ?? DEFAULT_OUTBOUND_STALL_MS;
    const waited = performance.now() - this.#blockedSince;
    if (waited >= stallMs) return this.#overflow();
    if (this.#stallTimer !== undefined) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      if (this.#blocked) this.checkBounds();
    }, stallMs - waited);
    // A stream does not hold the process open.
    this.#stallTimer.unref();
  }

  /** Tells the waiting readers once the backlog is gone. */
  relieve(): void {
    const relief = this.#relief;
    if (relief === undefined || relief.size === 0 || this.backlogged) return;
    const listeners = [...relief];
    relief.clear();
    for (const listener of listeners) listener();
  }

  #disarm(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }

  /** Drops the taken head of the queue once it is all of it, or most of a long one. */
  #compact(): void {
    const drop = this.#head;
    if (drop === this.#messages.length) return this.clear();
    if (drop < COMPACT_AFTER_MESSAGES || drop * 2 < this.#messages.length) return;
    this.#messages = this.#messages.slice(drop);
    this.#sizes = this.#sizes.slice(drop);
    this.#head = 0;
  }
}
