// The messages an outbound stream holds for its reader: their order and size,
// the bounds past which the reader is cut off, and the backlog agents' reads
// wait for. One case a row.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutboundQueue, type QueueLimits } from "../../sidecar/acp/outbound-queue.ts";

/** The reader behind the queue when its bounds are checked. */
type Reader = "none" | "taking" | "full";

interface BoundRow {
  row: string;
  limits: QueueLimits;
  reader: Reader;
  queued: string[];
  overflows: boolean;
}

const ten = "x".repeat(10);

const BOUND_ROWS: BoundRow[] = [
  { row: "at the message bound, nothing overflows", limits: { maxQueuedMessages: 2, maxQueuedBytes: 1_000, stallMs: 0 }, reader: "full", queued: [ten, ten], overflows: false },
  { row: "past the message bound with no reader, it overflows at once", limits: { maxQueuedMessages: 2, maxQueuedBytes: 1_000, stallMs: 60_000 }, reader: "none", queued: [ten, ten, ten], overflows: true },
  { row: "past the message bound behind a full reader, stallMs 0, it overflows at once", limits: { maxQueuedMessages: 2, maxQueuedBytes: 1_000, stallMs: 0 }, reader: "full", queued: [ten, ten, ten], overflows: true },
  { row: "past the message bound behind a reader that just took a message, it waits for stallMs", limits: { maxQueuedMessages: 2, maxQueuedBytes: 1_000, stallMs: 60_000 }, reader: "full", queued: [ten, ten, ten], overflows: false },
  { row: "at the byte bound, nothing overflows", limits: { maxQueuedMessages: 100, maxQueuedBytes: 20, stallMs: 60_000 }, reader: "taking", queued: [ten, ten], overflows: false },
  { row: "past the byte bound it overflows at once, even behind a reader that is reading", limits: { maxQueuedMessages: 100, maxQueuedBytes: 20, stallMs: 60_000 }, reader: "taking", queued: [ten, ten, "x"], overflows: true },
  { row: "bytes are counted in UTF-8, not in characters", limits: { maxQueuedMessages: 100, maxQueuedBytes: 20, stallMs: 60_000 }, reader: "taking", queued: ["é".repeat(11)], overflows: true },
];

function queueWith(limits: QueueLimits, reader: Reader): { queue: OutboundQueue; overflows: () => number } {
  let overflows = 0;
  const queue = new OutboundQueue(limits, () => (overflows += 1));
  if (reader !== "none") queue.readerAttached();
  if (reader === "full") queue.block();
  return { queue, overflows: () => overflows };
}

describe("OutboundQueue", () => {
  describe("bounds", () => {
    for (const { row, limits, reader, queued, overflows } of BOUND_ROWS) {
      it(row, () => {
        const { queue, overflows: count } = queueWith(limits, reader);
        for (const json of queued) queue.add(json);
        queue.checkBounds();
        assert.equal(count(), overflows ? 1 : 0);
        // Disarms a stall timer the row may have armed.
        queue.readerDetached();
      });
    }
  });

  it("takes messages in the order added, each counted in bytes until taken", () => {
    const { queue } = queueWith({ maxQueuedMessages: 10, maxQueuedBytes: 1_000 }, "taking");
    queue.add("a");
    queue.add("é");
    assert.equal(queue.queuedMessages, 2);
    assert.equal(queue.queuedBytes, 3);
    assert.equal(queue.take(), "a");
    assert.equal(queue.queuedBytes, 2);
    assert.equal(queue.take(), "é");
    assert.equal(queue.queuedMessages, 0);
    assert.equal(queue.queuedBytes, 0);
  });

  it("what is put back goes before what waits, in its own order", () => {
    const { queue } = queueWith({ maxQueuedMessages: 10, maxQueuedBytes: 1_000 }, "taking");
    queue.add("c");
    queue.take();
    queue.add("d");
    queue.putBack(["a", "b"]);
    assert.equal(queue.queuedBytes, 3);
    assert.deepEqual([queue.take(), queue.take(), queue.take()], ["a", "b", "d"]);
  });

  it("a long queue stays in order as taken positions are dropped", () => {
    const { queue } = queueWith({ maxQueuedMessages: 1 << 20, maxQueuedBytes: 1 << 30 }, "taking");
    const count = 10_000;
    for (let i = 0; i < count / 2; i++) queue.add(String(i));
    const taken: string[] = [];
    for (let i = count / 2; i < count; i++) {
      queue.add(String(i));
      taken.push(queue.take());
    }
    while (queue.queuedMessages > 0) taken.push(queue.take());
    assert.deepEqual(taken, Array.from({ length: count }, (_, i) => String(i)));
  });

  describe("backlog", () => {
    const limits = { maxQueuedMessages: 100, maxQueuedBytes: 1_000, highWaterBytes: 15 };

    it("past the high-water mark behind a reader it is backlogged; without a reader it is not", () => {
      const { queue } = queueWith(limits, "full");
      queue.add(ten);
      assert.equal(queue.backlogged, false, "at 10 of 15 bytes");
      queue.add(ten);
      assert.equal(queue.backlogged, true);
      queue.readerDetached();
      assert.equal(queue.backlogged, false);
    });

    /** A queue past its high-water mark, with a read waiting for it. */
    const waitedFor = () => {
      const { queue } = queueWith(limits, "full");
      queue.add(ten);
      queue.add(ten);
      let told = 0;
      queue.whenRelieved(() => (told += 1));
      return { queue, told: () => told };
    };

    it("a waiting read is told once, when the reader has taken the backlog", () => {
      const { queue, told } = waitedFor();
      queue.relieve();
      assert.equal(told(), 0, "still backlogged");
      queue.take();
      queue.relieve();
      queue.relieve();
      assert.equal(told(), 1);
    });

    it("a reader that goes away relieves the wait", () => {
      const { queue, told } = waitedFor();
      queue.readerDetached();
      assert.equal(told(), 1);
    });
  });
});
