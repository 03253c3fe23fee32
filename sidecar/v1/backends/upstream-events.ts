// The upstream provider's `stream: true` body: the event-stream grammar is
// eventsource-parser's (LF, CRLF and bare CR line ends, multi-line data),
// bounded so that a provider that never ends an event cannot grow the
// sidecar's memory; an event past the bound fails the completion with 502.
import { createParser } from "eventsource-parser";
import { upstreamFailed } from "../errors.ts";

/** The payload OpenAI-compatible providers end a stream with. */
const DONE = "[DONE]";

/**
 * Calls `onData` with the data of each event until `[DONE]` or the end of the
 * body. An event (or line) longer than `maxEventChars` rejects with a 502; so
 * does whatever `onData` throws, which stops the reading.
 */
export async function readUpstreamEvents(
  body: AsyncIterable<Uint8Array>,
  maxEventChars: number,
  onData: (data: string) => void,
): Promise<void> {
  let failure: unknown;
  let done = false;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent(event) {
      if (done || failure !== undefined) return;
      if (event.data === DONE) {
        done = true;
        return;
      }
      try {
        onData(event.data);
      } catch (error) {
        failure = error;
      }
    },
    onError(error) {
      if (error.type === "max-buffer-size-exceeded") {
        failure ??= upstreamFailed(`The upstream provider sent an event longer than ${maxEventChars} characters.`);
      }
    },
  });
  const decoder = new TextDecoder();
  // Leaving the loop (return or throw) cancels the body, which closes the provider's response.
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure !== undefined) throw failure;
    if (done) return;
  }
  parser.feed(decoder.decode());
  if (failure !== undefined) throw failure;
}
