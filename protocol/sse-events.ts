// The event-stream grammar of the GET streams (design: decision 6 — one
// JSON-RPC message per event in `data:` lines; comment lines are keep-alives;
// `id:` names an event a reader may resume after with Last-Event-ID), read
// from text by both clients: `connect` (client/sse.ts, fed by Node streams)
// and the web client (web/client/sse.ts, fed by a fetch body). It uses
// nothing of a runtime, so each side only decodes its bytes and hands the
// text over.
//
// Lines end in CRLF, LF or a bare CR. A CR that ends a piece of text is read
// as a line end at once (the last event of a stream that ends its lines with
// a bare CR is not held back), and a LF that starts the next piece is then
// the rest of that CRLF, not a second, empty line that would end an event
// early. What is buffered (a partial line plus the data of an unfinished
// event) is bounded, so a server cannot make a client buffer without limit.

/** Thrown when an event (or a line) exceeds the reader's bound. */
export class SseEventTooLarge extends Error {
  readonly maxChars: number;
  constructor(maxChars: number) {
    super(`an event of the stream exceeds ${maxChars} characters`);
    this.name = "SseEventTooLarge";
    this.maxChars = maxChars;
  }
}

/**
 * Where each event goes: its data (the `data:` lines joined with LF; "" for
 * an event of one empty `data:` line, which only carries an id) and its own
 * `id:` field, when it has one.
 */
export type SseEventHandler = (data: string, id: string | undefined) => void;

/** An incremental event-stream reader: feed it text, it hands over each event as it completes. */
export class SseEventReader {
  readonly #maxChars: number;
  readonly #onEvent: SseEventHandler;
  #buffer = "";
  /** How far #buffer is known to hold no line end: a long line is not searched again from its start. */
  #scanned = 0;
  #data: string[] = [];
  #dataChars = 0;
  #id: string | undefined;
  #first = true;
  /** The previous text ended in CR: a LF that starts the next one belongs to it. */
  #skipLf = false;
  /** Comment lines read so far: a server that sends them sends keep-alives. */
  comments = 0;
  /** The id of the last event read, as the grammar keeps it (sent as Last-Event-ID on a resume). */
  lastEventId: string | undefined;

  /** @param maxChars largest event (and line), in UTF-16 code units. */
  constructor(onEvent: SseEventHandler, maxChars: number) {
    this.#onEvent = onEvent;
    this.#maxChars = maxChars;
  }

  /**
   * Reads text; hands every event it completes to the handler, in order, as
   * it completes (so an oversized event later in the same text does not take
   * the earlier ones with it). Throws SseEventTooLarge past the bound.
   */
  push(text: string): void {
    if (this.#first && text.length > 0) {
      // A byte order mark may start the stream.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#first = false;
    }
    if (this.#skipLf && text.charCodeAt(0) === 0x0a) text = text.slice(1);
    if (text.length === 0) return;
    this.#skipLf = text.charCodeAt(text.length - 1) === 0x0d;
    this.#buffer += text;
    let start = 0;
    let from = this.#scanned;
    for (;;) {
      const cr = this.#buffer.indexOf("\r", from);
      const lf = this.#buffer.indexOf("\n", from);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.#line(this.#buffer.slice(start, end));
      start = end + (this.#buffer.startsWith("\r\n", end) ? 2 : 1);
      from = start;
    }
    this.#buffer = this.#buffer.slice(start);
    this.#scanned = this.#buffer.length;
    if (this.#buffer.length + this.#dataChars > this.#maxChars) throw new SseEventTooLarge(this.#maxChars);
  }

  #line(line: string): void {
    if (line === "") {
      const data = this.#data;
      const id = this.#id;
      this.#data = [];
      this.#dataChars = 0;
      this.#id = undefined;
      // An event without a data line is no event (its id still counts).
      if (data.length > 0) this.#onEvent(data.join("\n"), id);
      return;
    }
    if (line.charCodeAt(0) === 0x3a) {
      this.comments++;
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (field === "data") {
      this.#dataChars += value.length + 1;
      if (this.#dataChars > this.#maxChars) throw new SseEventTooLarge(this.#maxChars);
      this.#data.push(value);
    } else if (field === "id" && !value.includes("\0")) {
      this.#id = value;
      this.lastEventId = value;
    }
    // `event`, `retry` and unknown fields are read past: /acp sends messages in the default event type.
  }
}
