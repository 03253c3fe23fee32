// Server-Sent Events for `stream: true`: one `data: <chunk>` event per
// completion chunk, ending with `data: [DONE]` as OpenAI-compatible clients
// expect (design: Deferred completions, decision 5). Writes respect
// backpressure: a chunk waits for `drain` when the client reads slowly.
import type { HttpResponse } from "../server/http/types.ts";
import type { ErrorBody } from "./errors.ts";
import { writeHead } from "./respond.ts";

export class EventStream {
  readonly #res: HttpResponse;
  #pending: Promise<void> = Promise.resolve();
  /** The client went away. HTTP/2 compatibility responses say so only by "close" (no `destroyed`). */
  #gone = false;

  constructor(res: HttpResponse) {
    this.#res = res;
    res.once("close", () => {
      this.#gone = true;
    });
    writeHead(res, 200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    // Headers go out now, so that the client sees the stream open before the first chunk.
    (res as { flushHeaders?: () => void }).flushHeaders?.();
  }

  get closed(): boolean {
    return this.#gone || this.#res.writableEnded || this.#res.destroyed === true;
  }

  #write(text: string): void {
    if (this.closed) return;
    this.#pending = this.#pending.then(
      () =>
        new Promise<void>((resolve) => {
          if (this.closed) return resolve();
          // Both HTTP/1.1 and HTTP/2 responses return false when their buffer is full.
          const ok = (this.#res.write as (chunk: string) => boolean)(text);
          if (ok) return resolve();
          const done = (): void => {
            this.#res.off("drain", done);
            this.#res.off("close", done);
            resolve();
          };
          this.#res.on("drain", done);
          this.#res.on("close", done);
        }),
    );
  }

  send(data: unknown): void {
    this.#write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** An error after the stream began: OpenAI's clients raise an event carrying `error`. */
  error(body: ErrorBody): void {
    this.send(body);
  }

  async end(): Promise<void> {
    this.#write("data: [DONE]\n\n");
    await this.#pending;
    if (!this.closed) this.#res.end();
  }
}
