// What the route asks of a backend: the models it serves and one completion.
// A model name selects a backend (design: Deferred completions, decision 4).
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ModelInfo } from "../../../protocol/v1.ts";

export interface CompletionRun {
  /** The completion's `id` (a deferred job's request_id, or a fresh `chatcmpl-` id). */
  id: string;
  /** The completion's `created`, Unix seconds. */
  created: number;
  /** Principal id of the person it runs for: an agent works in that person's folders. */
  owner: string;
  /** A deferred job's request_id: the permission requests of its run name it, so the editor shows them with the job. */
  requestId?: string;
  signal: AbortSignal;
  /** Present for `stream: true`: every chunk, in order, as it is produced (the route adds `data: [DONE]`). */
  onChunk?: (chunk: ChatCompletionChunk) => void;
}

export interface Backend {
  /** Models this backend serves, for GET /v1/models. */
  models(): Promise<ModelInfo[]>;
  /**
   * The concurrency key that runs `model` (see Slots), or undefined when this
   * backend does not serve it.
   */
  resolve(model: string): Promise<string | undefined>;
  /** Runs one completion; throws a V1Error (or any error, a 500) when it fails. */
  complete(request: ChatRequest, run: CompletionRun): Promise<ChatCompletion>;
}
