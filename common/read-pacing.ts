// A reader of one pipe that many consumers share (an agent's stdout, whose
// sessions go out to many clients) reads as fast as its peer writes. A
// consumer that takes what it is given more slowly (an HTTP/2 client lets a
// stream have 64 KiB at a time unless it raises its window) holds the
// difference in memory: a flood of 20,000 updates queued in full behind such
// a client, lived through the young generation, and brought the collector's
// major collections into most floods (docs/performance.md).
//
// So the reader paces itself on what its messages built up downstream: the
// consumers a delivery left past their high-water mark report themselves
// (`reportBacklog`), and the reader's next read waits until they are relieved
// (they drained, closed, or were cut off). A wait lasts at most `maxWaitMs`:
// a consumer that did not drain by then is slower than the pace it could
// set, and is not waited for again until it has drained once. The other
// consumers of the pipe wait at most that long, once, for a slow one; they
// never wait for one that takes nothing.

/** Something a reader's messages go to that may hold them back: an outbound stream. */
export interface Backlog {
  /** It holds more than its high-water mark now. */
  readonly backlogged: boolean;
  /**
   * Calls `listener` once, as soon as it holds no backlog any more (drained,
   * closed, cut off). Returns a function that withdraws the listener.
   */
  whenRelieved(listener: () => void): () => void;
}

/** The pacing whose messages are being delivered now, to which backlogs report. */
let delivering: ReadPacing | undefined;

/** `backlog` is past its high-water mark: the reader whose message is being delivered waits for it before its next read. */
export function reportBacklog(backlog: Backlog): void {
  delivering?.fed(backlog);
}

export class ReadPacing {
  readonly #maxWaitMs: number;
  /** Backlogs reported since the last read. */
  readonly #fed = new Set<Backlog>();
  /** Backlogs a wait gave up on: not waited for again until they are relieved. */
  readonly #slow = new Set<Backlog>();

  /** `maxWaitMs`: the longest one read waits for backlogs, in milliseconds. */
  constructor(maxWaitMs: number) {
    this.#maxWaitMs = maxWaitMs;
  }

  /** Runs `deliver`, the delivery of messages this reader read: backlogs reported meanwhile are this reader's. */
  deliver<T>(deliver: () => T): T {
    const outer = delivering;
    delivering = this;
    try {
      return deliver();
    } finally {
      delivering = outer;
    }
  }

  /** Called by `reportBacklog` while this pacing delivers. */
  fed(backlog: Backlog): void {
    if (!this.#slow.has(backlog)) this.#fed.add(backlog);
  }

  /**
   * Before the next read: undefined when it may read at once, or a promise
   * that resolves once every backlog reported since the last read was
   * relieved, or after `maxWaitMs`.
   */
  beforeRead(): Promise<void> | undefined {
    if (this.#fed.size === 0) return undefined;
    const waitFor = [...this.#fed].filter((b) => b.backlogged);
    this.#fed.clear();
    if (waitFor.length === 0) return undefined;
    return new Promise<void>((resolve) => {
      let left = waitFor.length;
      const withdraw: Array<() => void> = [];
      const done = (): void => {
        clearTimeout(timer);
        for (const w of withdraw) w();
        resolve();
      };
      const timer = setTimeout(() => {
        for (const backlog of waitFor) {
          if (!backlog.backlogged || this.#slow.has(backlog)) continue;
          this.#slow.add(backlog);
          backlog.whenRelieved(() => this.#slow.delete(backlog));
        }
        done();
      }, this.#maxWaitMs);
      // A reader waiting on a consumer does not hold the process open.
      timer.unref();
      for (const backlog of waitFor) {
        withdraw.push(
          backlog.whenRelieved(() => {
            left -= 1;
            if (left === 0) done();
          }),
        );
      }
    });
  }
}
