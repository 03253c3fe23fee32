// Server-Sent Events reader for the GET streams, on Node streams: decodes the
// bytes and hands the text to the event-stream reader both clients share
// (protocol/sse-events.ts, which also bounds what it may buffer), and turns
// its bound into the transport's error.
import { StringDecoder } from "node:string_decoder";
import { SseEventReader, SseEventTooLarge, type SseEventHandler } from "../protocol/sse-events.ts";
import { ClientTransportError, TransportErrorCode } from "./transport.ts";

export class SseParser {
  readonly #maxBytes: number;
  readonly #decoder = new StringDecoder("utf8");
  readonly #reader: SseEventReader;
  /** Where the events of the chunk being fed go, with their `id:` field when they have one. */
  #onEvent: SseEventHandler = () => {};

  /** @param maxBytes largest event (and line), in UTF-16 code units of its data, at most its UTF-8 bytes. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    this.#reader = new SseEventReader((data, id) => this.#onEvent(data, id), maxBytes);
  }

  /** Comment lines read so far: a server that sends them sends keep-alives. */
  get comments(): number {
    return this.#reader.comments;
  }

  /**
   * Feeds bytes; hands the data of every event they complete to `onEvent`, in
   * order, as it completes (so an oversized event later in the same chunk
   * does not take the earlier ones with it).
   */
  push(chunk: Buffer, onEvent: SseEventHandler): void {
    this.#onEvent = onEvent;
    try {
      this.#reader.push(this.#decoder.write(chunk));
    } catch (error) {
      if (error instanceof SseEventTooLarge) {
        throw new ClientTransportError(TransportErrorCode.Protocol, `an SSE event exceeds ${this.#maxBytes} bytes`);
      }
      throw error;
    } finally {
      this.#onEvent = () => {};
    }
  }
}
