// How an API module of the scripted model endpoint writes its answer: server-
// sent events or one JSON body, and a turn held open until the agent hangs up.

export interface TurnWriter {
  /** The request asked for a stream. */
  streamed: boolean;
  /** One server-sent event: `data` as JSON, with an `event:` line when named. */
  event(data: unknown, name?: string): void;
  /** A raw `data:` line's payload (Chat Completions' closing `[DONE]`). */
  data(payload: string): void;
  /** The whole answer as one JSON body. */
  json(body: unknown): void;
  end(): void;
  /** Keeps the stream open until the agent closes the request. */
  hold(): Promise<void>;
}
