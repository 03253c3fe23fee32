// Builders of the completion and chunk bodies, so every backend produces the
// same shape with every field of the spec ("Completion result (HTTP 200)").
import { randomUUID } from "node:crypto";
import type { AssistantMessage, ChatCompletion, ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from "../../protocol/v1.ts";
import { ObjectType } from "../../protocol/v1.ts";

/** `system_fingerprint` of completions the sidecar produces itself: the backend that ran them. */
export function fingerprint(backend: string): string {
  return `acp-remote:${backend}`;
}

/** Id of a plain (not deferred) completion, in OpenAI's form. */
export function newCompletionId(): string {
  return `chatcmpl-${randomUUID()}`;
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

export function completionBody(fields: {
  id: string;
  created: number;
  model: string;
  content: string;
  reasoning: string;
  finishReason: FinishReason;
  usage: Usage;
  fingerprint: string;
}): ChatCompletion {
  const message: AssistantMessage = { role: "assistant", content: fields.content, refusal: null };
  // Spec: `reasoning_content` is optional, present when there is a thinking trace.
  if (fields.reasoning.length > 0) message.reasoning_content = fields.reasoning;
  return {
    id: fields.id,
    object: ObjectType.completion,
    created: fields.created,
    model: fields.model,
    choices: [{ index: 0, message, finish_reason: fields.finishReason }],
    usage: fields.usage,
    system_fingerprint: fields.fingerprint,
  };
}

/** What every chunk of one stream repeats. */
interface ChunkBase {
  id: string;
  created: number;
  model: string;
  fingerprint: string;
}

function chunkOf(base: ChunkBase, choices: ChatCompletionChunk["choices"]): ChatCompletionChunk {
  return {
    id: base.id,
    object: ObjectType.chunk,
    created: base.created,
    model: base.model,
    system_fingerprint: base.fingerprint,
    choices,
  };
}

export function chunkBody(base: ChunkBase, delta: ChunkDelta, finishReason: FinishReason | null = null): ChatCompletionChunk {
  return chunkOf(base, [{ index: 0, delta, finish_reason: finishReason }]);
}

/** The last chunk of a stream with `stream_options.include_usage`: no choices, the usage. */
export function usageChunk(base: ChunkBase, usage: Usage): ChatCompletionChunk {
  return { ...chunkOf(base, []), usage };
}
