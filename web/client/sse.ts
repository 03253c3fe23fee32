// Reads the events of a server-sent event stream from a fetch body, with the
// event-stream reader `connect` uses too (protocol/sse-events.ts: line ends of
// every kind, split anywhere, ids, and a bound on what a stream may make the
// page buffer); this file only decodes the bytes of the browser's stream.
import { SseEventReader, type SseEventHandler } from "../../protocol/sse-events.ts";
import { DEFAULT_SSE_MAX_EVENT_CHARS } from "./limits.ts";

export { SseEventTooLarge } from "../../protocol/sse-events.ts";

/** The shared reader with the web client's bound. */
export class SseReader extends SseEventReader {
  constructor(onEvent: SseEventHandler, maxChars = DEFAULT_SSE_MAX_EVENT_CHARS) {
    super(onEvent, maxChars);
  }
}

/** Calls `onEvent` with each event until the stream ends (resolves) or fails or overflows (rejects). */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: SseEventHandler): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const events = new SseReader(onEvent);
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
