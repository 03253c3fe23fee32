// Server-Sent Events reader for the GET streams (design: decision 6 — one
// JSON-RPC message per event in `data:` lines; comment lines are keep-alives).
// Follows the HTML event-stream grammar: lines end in CRLF, LF or CR; `data`
// fields of one event are joined with "\n"; a blank line ends the event; other
// fields (event, id, retry) are read past. Both the line and the event are
// bounded so a server cannot make the client buffer without limit.
import { StringDecoder } from "node:string_decoder";
import { ClientTransportError, TransportErrorCode } from "./transport.ts";

export class SseParser {
  readonly #maxBytes: number;
  readonly #decoder = new StringDecoder("utf8");
  #line = "";
  #data: string[] = [];
  #dataLength = 0;
  #hasData = false;
  /** The previous chunk ended in CR: a LF that starts the next one belongs to it. */
  #skipLf = false;
  #first = true;
  /** Comment lines read so far: a server that sends them sends keep-alives. */
  comments = 0;

  /** @param maxBytes largest event (and line), in UTF-16 code units of its data, at most its UTF-8 bytes. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * Feeds bytes; hands the data of every event they complete to `onEvent`, in
   * order, as it completes (so an oversized event later in the same chunk
   * does not take the earlier ones with it).
   */
  push(chunk: Buffer, onEvent: (data: string) => void): void {
    let text = this.#decoder.write(chunk);
    if (this.#first && text.length > 0) {
      // A byte order mark may start the stream.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#first = false;
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a && this.#skipLf && i === start && this.#line.length === 0) {
        this.#skipLf = false;
        start = i + 1;
        continue;
      }
      this.#skipLf = false;
      if (c !== 0x0a && c !== 0x0d) continue;
      this.#line += text.slice(start, i);
      const event = this.#takeLine();
      if (event !== undefined) onEvent(event);
      if (c === 0x0d) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 0x0a) i++;
        } else {
          this.#skipLf = true;
        }
      }
      start = i + 1;
    }
    this.#line += text.slice(start);
    if (this.#line.length > this.#maxBytes) throw this.#tooLarge();
  }

  #takeLine(): string | undefined {
    const line = this.#line;
    this.#line = "";
    if (line.length === 0) {
      if (!this.#hasData) return undefined;
      const data = this.#data.join("\n");
      this.#data = [];
      this.#dataLength = 0;
      this.#hasData = false;
      return data;
    }
    if (line.charCodeAt(0) === 0x3a /* ":" comment: keep-alive */) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data") return undefined;
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    this.#dataLength += value.length + 1;
    if (this.#dataLength > this.#maxBytes) throw this.#tooLarge();
    this.#data.push(value);
    this.#hasData = true;
    return undefined;
  }

  #tooLarge(): ClientTransportError {
    return new ClientTransportError(TransportErrorCode.Protocol, `an SSE event exceeds ${this.#maxBytes} bytes`);
  }
}
