// Reads the data of server-sent events from a fetch body. /acp sends one
// JSON-RPC message per event in the default event type, and `:` comments as
// keep-alives, so the data lines of each event are all that matter.
//
// Lines end in CRLF, LF or a bare CR (the event-stream grammar). A CR that ends
// a chunk is held until the next one shows whether a LF follows: read as a line
// end at once, the LF would end a second, empty line and so an event early.
// What is buffered (a partial line plus the data of an unfinished event) is
// bounded, so a server cannot make the page buffer without limit.
import { DEFAULT_SSE_MAX_EVENT_CHARS } from "./limits.ts";

/** Thrown when an event (or a line) exceeds the bound. */
export class SseEventTooLarge extends Error {
  constructor(maxChars: number) {
    super(`an event of the stream exceeds ${maxChars} characters`);
    this.name = "SseEventTooLarge";
  }
}

/** An incremental event-stream reader: feed it text, it hands over each event's data. */
export class SseReader {
  readonly #maxChars: number;
  readonly #onData: (data: string) => void;
  #buffer = "";
  #data: string[] = [];
  #dataChars = 0;
  /** The previous text ended in CR: a LF that starts the next one belongs to it. */
  #skipLf = false;

  constructor(onData: (data: string) => void, maxChars = DEFAULT_SSE_MAX_EVENT_CHARS) {
    this.#onData = onData;
    this.#maxChars = maxChars;
  }

  push(text: string): void {
    if (this.#skipLf && text.startsWith("\n")) text = text.slice(1);
    this.#skipLf = text.endsWith("\r");
    this.#buffer += text;
    let start = 0;
    for (;;) {
      const cr = this.#buffer.indexOf("\r", start);
      const lf = this.#buffer.indexOf("\n", start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.#line(this.#buffer.slice(start, end));
      start = end + (this.#buffer.startsWith("\r\n", end) ? 2 : 1);
    }
    this.#buffer = this.#buffer.slice(start);
    if (this.#buffer.length + this.#dataChars > this.#maxChars) throw new SseEventTooLarge(this.#maxChars);
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#data.length > 0) this.#onData(this.#data.join("\n"));
      this.#data = [];
      this.#dataChars = 0;
    } else if (line.startsWith("data:")) {
      const value = line.slice(line.startsWith("data: ") ? 6 : 5);
      this.#dataChars += value.length + 1;
      if (this.#dataChars > this.#maxChars) throw new SseEventTooLarge(this.#maxChars);
      this.#data.push(value);
    }
  }
}

/** Calls `onData` with each event's data until the stream ends (resolves) or fails or overflows (rejects). */
export async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const events = new SseReader(onData);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      events.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
