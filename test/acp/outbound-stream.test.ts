// An outbound stream: its bounded queue behind every SSE stream and WebSocket, and what an SSE stream keeps for a reader that resumes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutboundStream, type OutboundLimits } from "../../sidecar/acp/outbound-stream.ts";
import type { QueuedAmount } from "../../sidecar/acp/outbound-queue.ts";
import type { OutboundSink } from "../../sidecar/http/outbound-sink.ts";

class RecordingSink implements OutboundSink {
  written: string[] = [];
  /** The number the stream gave each written message. */
  seqs: number[] = [];
  /** write() answers false once this many messages are held (a full socket). */
  capacity = Infinity;
  ended = false;
  aborted = false;
  write(json: string, seq: number): boolean {
    this.written.push(json);
    this.seqs.push(seq);
    return this.written.length < this.capacity;
  }
  end(): void {
    this.ended = true;
  }
  abort(): void {
    this.aborted = true;
  }
}

const message = (n: number) => ({ jsonrpc: "2.0" as const, method: "session/update", params: { n } });
const numbers = (sink: RecordingSink) => sink.written.map((j) => (JSON.parse(j) as { params: { n: number } }).params.n);

/**
 * A stream with `limits` whose reader's socket is full after one message,
 * once messages 1 to `count` were pushed; its cut-offs, and the first one.
 */
function behindReader(limits: OutboundLimits, count: number) {
  const stream = new OutboundStream(limits);
  const sink = new RecordingSink();
  sink.capacity = 1;
  const cuts: QueuedAmount[] = [];
  const cutOff = new Promise<QueuedAmount>((resolve) => {
    stream.onCutOff = (queued) => {
      cuts.push(queued);
      resolve(queued);
    };
  });
  stream.attach(sink);
  for (let i = 1; i <= count; i++) stream.push(message(i));
  return { stream, sink, cuts, cutOff };
}

describe("OutboundStream", () => {
  it("buffers until a reader attaches, then delivers in order", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10, maxQueuedBytes: 1 << 20 });
    stream.push(message(1));
    stream.push(message(2));
    const sink = new RecordingSink();
    assert.equal(stream.attach(sink), "attached");
    stream.push(message(3));
    assert.deepEqual(numbers(sink), [1, 2, 3]);
  });

  it("a second reader is refused while one is attached (the 409)", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10, maxQueuedBytes: 1 << 20 });
    assert.equal(stream.attach(new RecordingSink()), "attached");
    assert.equal(stream.attach(new RecordingSink()), "busy");
  });

  it("respects backpressure: after write() answers false it waits for resume()", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10, maxQueuedBytes: 1 << 20 });
    const sink = new RecordingSink();
    sink.capacity = 2;
    stream.attach(sink);
    for (let i = 1; i <= 5; i++) stream.push(message(i));
    assert.deepEqual(numbers(sink), [1, 2]);
    assert.equal(stream.queuedMessages, 3);
    sink.capacity = Infinity;
    stream.resume();
    assert.deepEqual(numbers(sink), [1, 2, 3, 4, 5]);
  });

  it("a reader that stops reading is cut off once the message bound is hit (stallMs 0: no grace)", () => {
    const { stream, sink, cuts } = behindReader({ maxQueuedMessages: 3, maxQueuedBytes: 1 << 20, stallMs: 0 }, 5);
    assert.equal(sink.aborted, true, "the stalled reader is dropped at once");
    assert.equal(cuts.length, 1);
    assert.equal(stream.attached, false);
    assert.equal(stream.queuedMessages, 0, "its queue is freed");
    // A new reader gets what comes next.
    const next = new RecordingSink();
    assert.equal(stream.attach(next), "attached");
    stream.push(message(6));
    assert.deepEqual(numbers(next), [6]);
  });

  it("regression: a reader that keeps reading is not cut off when an agent gets more than the message bound ahead of it", () => {
    // A fast agent wrote faster than a client that was reading; the message
    // bound cut the client off as if it had stopped reading.
    const { stream, sink, cuts } = behindReader({ maxQueuedMessages: 3, maxQueuedBytes: 1 << 20, stallMs: 60_000 }, 10);
    assert.equal(stream.queuedMessages, 9, "past the bound of 3");
    assert.equal(sink.aborted, false, "the reader took a message a moment ago: it is not stalled");
    assert.equal(cuts.length, 0);
    sink.capacity = Infinity;
    stream.resume();
    assert.deepEqual(numbers(sink), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "everything, in order");
  });

  it("past the message bound, a reader that takes nothing for stallMs is cut off, though no further message comes", async () => {
    const start = performance.now();
    const { stream, sink, cutOff } = behindReader({ maxQueuedMessages: 3, maxQueuedBytes: 1 << 20, stallMs: 50 }, 5);
    assert.equal(sink.aborted, false, "not at once");
    const queued = await cutOff;
    assert.ok(performance.now() - start >= 45, "after the stall time");
    assert.equal(queued.messages, 4);
    assert.equal(sink.aborted, true);
    assert.equal(stream.queuedMessages, 0, "its queue is freed");
  });

  it("a reader that drains in time is not cut off when the stall time is up", async () => {
    const limits = { maxQueuedMessages: 3, maxQueuedBytes: 1 << 20, stallMs: 30 };
    const { stream, sink, cuts } = behindReader(limits, 5);
    // A witness that stalls from the same moment: its cut-off comes when the first stream's check is due too.
    const witness = behindReader(limits, 5);
    sink.capacity = Infinity;
    stream.resume();
    await witness.cutOff;
    assert.equal(cuts.length, 0);
    assert.equal(sink.aborted, false);
    assert.deepEqual(numbers(sink), [1, 2, 3, 4, 5]);
  });

  it("the byte bound cuts off too, at once, even a reader that is reading", () => {
    const { stream, sink } = behindReader({ maxQueuedMessages: 1000, maxQueuedBytes: 200, stallMs: 60_000 }, 1);
    stream.push({ jsonrpc: "2.0", method: "x", params: { big: "y".repeat(300) } });
    assert.equal(sink.aborted, true);
  });

  it("regression: draining a long queue takes time in proportion to its length (taking from its head copied the rest each time)", () => {
    // A fast agent 200,000 messages ahead of its reader: each shift() of the
    // queue copied the whole rest of it, so draining took quadratic time (tens
    // of seconds here, 18% of the relay's CPU in its profile).
    const count = 200_000;
    const stream = new OutboundStream({ maxQueuedMessages: 1_000_000, maxQueuedBytes: 1 << 30, stallMs: 60_000 });
    let taken = 0;
    let last = 0;
    let inOrder = true;
    const sink: OutboundSink = {
      write: (json) => {
        const n = Number(json);
        if (n !== last + 1) inOrder = false;
        last = n;
        taken += 1;
        return taken > 1;
      },
      end: () => {},
      abort: () => {},
    };
    stream.attach(sink);
    for (let i = 1; i <= count; i++) stream.push(i as unknown as Parameters<OutboundStream["push"]>[0]);
    assert.equal(stream.queuedMessages, count - 1);
    const start = performance.now();
    stream.resume();
    const ms = performance.now() - start;
    assert.equal(taken, count);
    assert.ok(inOrder, "in order");
    assert.equal(stream.queuedMessages, 0);
    assert.ok(ms < 3_000, `drained ${count} messages in ${ms.toFixed(0)} ms`);
  });

  it("without a reader, what exceeds the bound is dropped and the stream keeps taking messages", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 2, maxQueuedBytes: 1 << 20 });
    for (let i = 1; i <= 3; i++) stream.push(message(i));
    assert.equal(stream.queuedMessages, 0);
    stream.push(message(4));
    const sink = new RecordingSink();
    stream.attach(sink);
    assert.deepEqual(numbers(sink), [4]);
  });

  it("close() ends the reader gracefully and drops later messages", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10, maxQueuedBytes: 1 << 20 });
    const sink = new RecordingSink();
    stream.attach(sink);
    stream.close();
    assert.equal(sink.ended, true);
    assert.equal(sink.aborted, false);
    stream.push(message(1));
    assert.deepEqual(sink.written, []);
    assert.equal(stream.attach(new RecordingSink()), "busy");
  });

  // Resumption (Last-Event-ID): what was written after the reader's last
  // message is written again, within the replay bounds.
  const resumable = (replayEvents: number, replayChars = 1 << 20) =>
    new OutboundStream({ maxQueuedMessages: 100, maxQueuedBytes: 1 << 20, replayEvents, replayChars });
  /** A reader attached, was written messages 1 to `count`, and went away. */
  const readThenLeft = (stream: OutboundStream, count: number) => {
    const first = new RecordingSink();
    stream.attach(first);
    for (let i = 1; i <= count; i++) stream.push(message(i));
    stream.detach(first);
  };

  it("numbers messages from 1 in the order pushed, whether queued or written straight through", () => {
    const stream = resumable(10);
    stream.push(message(1));
    const sink = new RecordingSink();
    stream.attach(sink);
    stream.push(message(2));
    assert.deepEqual(sink.seqs, [1, 2]);
  });

  it("a reader that resumes after message k gets k+1… again, then what queued while it was away, each once", () => {
    const stream = resumable(10);
    readThenLeft(stream, 5); // the client got 1–3; 4 and 5 died in the socket
    stream.push(message(6));
    const second = new RecordingSink();
    assert.equal(stream.attach(second, 3), "attached");
    stream.push(message(7));
    assert.deepEqual(numbers(second), [4, 5, 6, 7]);
    assert.deepEqual(second.seqs, [4, 5, 6, 7]);
  });

  it("resuming after the last message written sends only what queued since", () => {
    const stream = resumable(10);
    readThenLeft(stream, 3);
    stream.push(message(4));
    const second = new RecordingSink();
    assert.equal(stream.attach(second, 3), "attached");
    assert.deepEqual(numbers(second), [4]);
  });

  it("a resume point older than the kept events, or past what was written, is not kept (the 410) and attaches nothing", () => {
    const stream = resumable(3);
    readThenLeft(stream, 6);
    stream.push(message(7)); // queued, never written
    assert.equal(stream.keeps(2), false, "3 is no longer kept (3 events are: 4–6)");
    assert.equal(stream.keeps(3), true);
    assert.equal(stream.keeps(7), false, "7 was never written to any reader");
    const second = new RecordingSink();
    assert.equal(stream.attach(second, 2), "not-kept");
    assert.equal(stream.attached, false);
    assert.deepEqual(second.written, []);
    assert.equal(stream.attach(second, 3), "attached");
    assert.deepEqual(numbers(second), [4, 5, 6, 7]);
  });

  it("the character bound forgets the oldest kept events", () => {
    const size = JSON.stringify(message(1)).length;
    const stream = resumable(100, size * 2);
    const first = new RecordingSink();
    stream.attach(first);
    for (let i = 1; i <= 4; i++) stream.push(message(i));
    assert.equal(stream.keeps(1), false);
    assert.equal(stream.keeps(2), true, "3 and 4 are kept");
  });

  it("a reader cut off for not reading cannot resume: what it missed is gone", () => {
    const { stream, sink } = behindReader({ maxQueuedMessages: 3, maxQueuedBytes: 1 << 20, stallMs: 0, replayEvents: 100, replayChars: 1 << 20 }, 5);
    assert.equal(sink.aborted, true);
    assert.equal(stream.keeps(1), false);
    stream.push(message(6));
    const next = new RecordingSink();
    stream.attach(next);
    assert.deepEqual(next.seqs, [6], "the numbering goes on");
  });

  it("keeps its numbering across long runs (the log is compacted, not renumbered)", () => {
    const stream = resumable(50);
    readThenLeft(stream, 5000);
    const again = new RecordingSink();
    assert.equal(stream.attach(again, 4990), "attached");
    assert.deepEqual(numbers(again), [4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999, 5000]);
    assert.deepEqual(again.seqs, numbers(again));
  });

  it("a stream without replay bounds keeps nothing", () => {
    const stream = new OutboundStream({ maxQueuedMessages: 10, maxQueuedBytes: 1 << 20 });
    const sink = new RecordingSink();
    stream.attach(sink);
    stream.push(message(1));
    stream.push(message(2));
    assert.equal(stream.resumable, false);
    assert.equal(stream.keeps(1), false);
    assert.deepEqual(sink.seqs, [1, 2]);
  });
});
