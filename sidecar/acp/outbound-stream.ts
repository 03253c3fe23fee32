// One outbound stream of server-to-client messages: a connection stream, a
// session stream (Streamable HTTP) or a WebSocket. It numbers the messages
// pushed to it and writes them to its reader, the sink attached now. What the
// reader cannot take yet waits in a bounded queue (outbound-queue.ts): a
// reader that stops reading is cut off. An SSE stream also keeps what it
// wrote (replay-log.ts), so that a reader that comes back with the number of
// the last event it got (`Last-Event-ID`) is sent what follows it again; a
// WebSocket keeps nothing.
//
// Numbering: every message pushed is written or dropped in order, so the
// queue holds the newest ones pushed, and the log the newest ones written
// before those.
import { lineReadFor } from "../../common/ndjson.ts";
import type { OutboundSink } from "../http/outbound-sink.ts";
import { type Backlog, reportBacklog } from "../../common/read-pacing.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { OutboundQueue, type QueuedAmount, type QueueLimits } from "./outbound-queue.ts";
import { ReplayLog, type ReplayLimits } from "./replay-log.ts";

/** The queue's bounds, and the replay log's: an SSE stream keeps what it wrote when `replayEvents` is given, a WebSocket never. */
export interface OutboundLimits extends QueueLimits, Partial<ReplayLimits> {}

/** How `attach` went: attached, another reader holds the stream (409), or the resume point is not kept (410). */
export type AttachResult = "attached" | "busy" | "not-kept";

export class OutboundStream implements Backlog {
  readonly #queue: OutboundQueue;
  /** Absent when the stream keeps nothing: it then costs nothing per message. */
  readonly #log: ReplayLog | undefined;
  /** Messages pushed so far, which is the number of the last one. */
  #pushedMessages = 0;
  #sink: OutboundSink | undefined;
  #closed = false;
  /** Called when a reader is cut off (queue bound hit), for logs and tests. */
  onCutOff: ((queued: QueuedAmount) => void) | undefined;

  /**
   * Names this stream in its event ids (`<tag>-<number>`), so that an id of
   * another stream, session or connection is told apart from one of its own.
   */
  readonly tag: string;

  constructor(limits: OutboundLimits, tag = "") {
    this.tag = tag;
    this.#queue = new OutboundQueue(limits, () => this.#cutOff());
    const replayEvents = limits.replayEvents ?? 0;
    this.#log = replayEvents > 0
      ? new ReplayLog({ replayEvents, replayChars: limits.replayChars ?? 0, replayBudget: limits.replayBudget })
      : undefined;
  }

  get attached(): boolean {
    return this.#sink !== undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get queuedMessages(): number {
    return this.#queue.queuedMessages;
  }

  /** Characters of the written messages kept for a resume. */
  get keptChars(): number {
    return this.#log?.keptChars ?? 0;
  }

  /** A reader is attached and more than the high-water mark waits for it. */
  get backlogged(): boolean {
    return this.#queue.backlogged;
  }

  whenRelieved(listener: () => void): () => void {
    return this.#queue.whenRelieved(listener);
  }

  /** Whether a reader can resume this stream after an event it got. */
  get resumable(): boolean {
    return this.#log !== undefined;
  }

  /** Queues one message and writes what the sink takes. Messages after close() are dropped. */
  push(message: JsonRpcMessage): void {
    if (this.#closed) return;
    // A notification relayed as an agent wrote it goes out in the agent's own text.
    const json = lineReadFor(message) ?? JSON.stringify(message);
    const seq = ++this.#pushedMessages;
    const sink = this.#sink;
    const queue = this.#queue;
    // Nothing waits and the sink takes writes: straight through.
    if (sink !== undefined && !queue.blocked && queue.queuedMessages === 0) {
      this.#log?.keep(json);
      if (!sink.write(json, seq)) queue.block();
      return;
    }
    queue.add(json);
    this.#flush();
    queue.checkBounds();
    if (queue.backlogged) reportBacklog(queue);
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
    this.#queue.readerAttached();
    sink.start?.(this.#lastWritten());
    this.#flush();
    return "attached";
  }

  /** The reader went away (its request or socket closed); later messages queue for the next one. */
  detach(sink: OutboundSink): void {
    if (this.#sink !== sink) return;
    this.#sink = undefined;
    this.#queue.readerDetached();
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
    this.#queue.unblock();
    this.#flush();
  }

  /** Ends the reader and drops what is queued; the stream takes no more messages. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const sink = this.#sink;
    this.#sink = undefined;
    this.#forgetAll();
    sink?.end();
  }

  /**
   * Whether a reader that got message `after` can resume here: every message
   * written after it is still kept (none may have been written yet). A number
   * past what was written was never sent to that reader.
   */
  keeps(after: number): boolean {
    if (this.#closed || !Number.isSafeInteger(after)) return false;
    const written = this.#lastWritten();
    return after <= written && after >= written - (this.#log?.keptMessages ?? 0);
  }

  /** The number of the last message written or dropped: the queue holds the ones after it. */
  #lastWritten(): number {
    return this.#pushedMessages - this.#queue.queuedMessages;
  }

  /** Puts what was written after message `after` back in the queue; false when that is not kept. */
  #rewind(after: number): boolean {
    if (!this.keeps(after)) return false;
    const count = this.#lastWritten() - after;
    if (count > 0 && this.#log !== undefined) this.#queue.putBack(this.#log.takeBack(count));
    return true;
  }

  #flush(): void {
    const sink = this.#sink;
    const queue = this.#queue;
    while (sink !== undefined && !queue.blocked && queue.queuedMessages > 0 && this.#sink === sink) {
      const seq = this.#lastWritten() + 1;
      const json = queue.take();
      this.#log?.keep(json);
      if (!sink.write(json, seq)) queue.block();
    }
    queue.relieve();
  }

  // Over the bound. With a reader, it is not reading: end it; what it missed
  // is gone, kept messages too, so a resume answers 410 and the client loads
  // the session (spec "Durability" 7). Without one, nobody came for these
  // messages: drop them and keep taking new ones for a reader that may still
  // come.
  #cutOff(): void {
    const queue = this.#queue;
    const queued = { messages: queue.queuedMessages, bytes: queue.queuedBytes };
    const sink = this.#sink;
    this.#sink = undefined;
    this.#forgetAll();
    sink?.abort();
    this.onCutOff?.(queued);
  }

  /** Drops what waits and what is kept, and lets the reader go; the numbering goes on. */
  #forgetAll(): void {
    this.#queue.clear();
    this.#log?.clear();
    this.#queue.readerDetached();
  }
}
