// Server-Sent Events reader for the GET streams (design: decision 6 — one
// JSON-RPC message per event in `data:` lines; comment lines are keep-alives).
// The event-stream grammar is eventsource-parser's; this file feeds it bytes,
// counts the keep-alives, and bounds what it may buffer (a partial line plus
// the data of an unfinished event) so a server cannot make the client buffer
// without limit.
import { StringDecoder } from "node:string_decoder";
import { createParser, type EventSourceParser, type ParseError } from "eventsource-parser";
import { ClientTransportError, TransportErrorCode } from "./transport.ts";

export class SseParser {
  readonly #maxBytes: number;
  readonly #decoder = new StringDecoder("utf8");
  readonly #parser: EventSourceParser;
  /** Where the events of the chunk being fed go, with their `id:` field when they have one. */
  #onEvent: (data: string, id: string | undefined) => void = () => {};
  #first = true;
  /** The previous chunk ended in CR: a LF that starts the next one belongs to it. */
  #skipLf = false;
  /** Comment lines read so far: a server that sends them sends keep-alives. */
  comments = 0;

  /** @param maxBytes largest event (and line), in UTF-16 code units of its data, at most its UTF-8 bytes. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    this.#parser = createParser({
      maxBufferSize: maxBytes,
      onEvent: (event) => {
        // The parser bounds what it buffers across chunks; an event that came
        // whole in one chunk is bounded here.
        if (event.data.length > maxBytes) throw this.#tooLarge();
        this.#onEvent(event.data, event.id);
      },
      onComment: () => {
        this.comments++;
      },
      onError: (error: ParseError) => {
        // Unknown fields are read past, as the grammar says; only the bound ends the stream.
        if (error.type === "max-buffer-size-exceeded") throw this.#tooLarge();
      },
    });
  }

  /**
   * Feeds bytes; hands the data of every event they complete to `onEvent`, in
   * order, as it completes (so an oversized event later in the same chunk
   * does not take the earlier ones with it).
   */
  push(chunk: Buffer, onEvent: (data: string, id: string | undefined) => void): void {
    let text = this.#decoder.write(chunk);
    if (this.#first && text.length > 0) {
      // A byte order mark may start the stream.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#first = false;
    }
    if (this.#skipLf && text.charCodeAt(0) === 0x0a) text = text.slice(1);
    if (text.length === 0) return;
    this.#skipLf = text.charCodeAt(text.length - 1) === 0x0d;
    this.#onEvent = onEvent;
    try {
      // Every line end as LF: the parser holds a CR that ends a chunk back
      // until it knows whether a LF follows, which would hold back the last
      // event of a stream that ends its lines with a bare CR.
      this.#parser.feed(text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text);
    } finally {
      this.#onEvent = () => {};
    }
  }

  #tooLarge(): ClientTransportError {
    return new ClientTransportError(TransportErrorCode.Protocol, `an SSE event exceeds ${this.#maxBytes} bytes`);
  }
}
