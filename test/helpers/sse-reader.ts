// Reads Server-Sent Events from a byte stream: each event's `data:` lines,
// joined, parsed as JSON. Comments (keep-alives) are counted, not returned;
// nor is an event with empty data (a stream's first, which only gives an id).
// Event ids are tracked as a browser's EventSource does: `lastEventId` is the
// id of the last message handed out by `next()` (or of one before it).
export class SseReader {
  readonly #messages: { message: unknown; id: string | undefined }[] = [];
  /** The last `id:` field read (it carries over events that have none). */
  #readId: string | undefined;
  /** The id in effect for the last message handed out: what a resuming client sends as Last-Event-ID. */
  lastEventId: string | undefined;
  readonly #waiters: { resolve: (m: unknown, id: string | undefined) => void; reject: (e: Error) => void }[] = [];
  #buffer = "";
  #ended = false;
  #endError: Error | undefined;
  comments = 0;
  readonly #commentWaiters: { count: number; wake: () => void }[] = [];
  readonly ended: Promise<void>;
  #resolveEnded!: () => void;

  constructor(source: AsyncIterable<Uint8Array | string>) {
    this.ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
    void this.#pump(source);
  }

  /** The next message; rejects when the stream ends first or after `timeoutMs`. */
  next(timeoutMs = 10_000): Promise<unknown> {
    const queued = this.#messages.shift();
    if (queued !== undefined) {
      this.lastEventId = queued.id;
      return Promise.resolve(queued.message);
    }
    if (this.#ended) return Promise.reject(this.#endError ?? new Error("SSE stream ended"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(new Error(`no SSE message within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        resolve: (m: unknown, id: string | undefined) => {
          clearTimeout(timer);
          this.lastEventId = id;
          resolve(m);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /** Messages until one matches (those before are returned too). */
  async until(predicate: (m: Record<string, unknown>) => boolean, timeoutMs = 10_000): Promise<Record<string, unknown>[]> {
    const seen: Record<string, unknown>[] = [];
    for (;;) {
      const m = (await this.next(timeoutMs)) as Record<string, unknown>;
      seen.push(m);
      if (predicate(m)) return seen;
    }
  }

  /**
   * Resolves once `count` comments (keep-alives) have arrived in all; rejects
   * when the stream ends first or after `timeoutMs`. Keep-alives come every
   * keepAliveMs, so this waits on the server's own clock.
   */
  commentsAtLeast(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.comments >= count) return Promise.resolve();
    if (this.#ended) return Promise.reject(new Error(`SSE stream ended after ${this.comments} of ${count} comments`));
    return new Promise((resolve, reject) => {
      const waiter = {
        count,
        wake: () => {
          clearTimeout(timer);
          if (this.comments >= count) resolve();
          else reject(new Error(`SSE stream ended after ${this.comments} of ${count} comments`));
        },
      };
      const timer = setTimeout(() => {
        const i = this.#commentWaiters.indexOf(waiter);
        if (i !== -1) this.#commentWaiters.splice(i, 1);
        reject(new Error(`${this.comments} of ${count} SSE comments within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#commentWaiters.push(waiter);
    });
  }

  #wakeCommentWaiters(): void {
    for (let i = this.#commentWaiters.length - 1; i >= 0; i--) {
      const waiter = this.#commentWaiters[i]!;
      if (this.#ended || this.comments >= waiter.count) {
        this.#commentWaiters.splice(i, 1);
        waiter.wake();
      }
    }
  }

  get isEnded(): boolean {
    return this.#ended;
  }

  async #pump(source: AsyncIterable<Uint8Array | string>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of source) {
        this.#buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = this.#buffer.indexOf("\n\n")) !== -1) {
          const event = this.#buffer.slice(0, end);
          this.#buffer = this.#buffer.slice(end + 2);
          this.#onEvent(event);
        }
      }
    } catch (error) {
      this.#endError = error instanceof Error ? error : new Error(String(error));
    }
    this.#ended = true;
    this.#wakeCommentWaiters();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#endError ?? new Error("SSE stream ended"));
    this.#resolveEnded();
  }

  #onEvent(event: string): void {
    const data: string[] = [];
    for (const line of event.split("\n")) {
      if (line.startsWith(":")) this.comments += 1;
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      else if (line.startsWith("id:")) this.#readId = line.slice(3).replace(/^ /, "");
    }
    this.#wakeCommentWaiters();
    // No data, or empty data: no message (a stream's first event carries only its id).
    if (data.length === 0 || data.join("\n") === "") return;
    const message: unknown = JSON.parse(data.join("\n"));
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.resolve(message, this.#readId);
    else this.#messages.push({ message, id: this.#readId });
  }
}
