// Where an outbound stream writes: an SSE response (sse-sink.ts) or a
// WebSocket. The /acp transport's streams (sidecar/acp/outbound-stream.ts)
// and /v1's `stream: true` write through it.
/** Where a stream writes: an SSE response or a WebSocket. */
export interface OutboundSink {
  /**
   * Writes one serialized message, numbered `seq` on its stream; false when
   * the sink is full and the stream must wait for `resume()`.
   */
  write(json: string, seq: number): boolean;
  /** Ends the sink after what it holds is written (stream closed, server shutdown). */
  end(): void;
  /** Drops the sink at once, unsent bytes and all: its reader stopped reading. */
  abort(): void;
  /**
   * Called once as the sink attaches, before any message: `after` is the
   * number of the last message before the ones it will get, where its reader
   * resumes from should it be cut before the first of them.
   */
  start?(after: number): void;
}
