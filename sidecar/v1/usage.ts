// Usage of a completion (design: Deferred completions, decision 4): what the
// backend reports when it reports it, counted with a tokenizer (o200k_base, the
// encoding of current OpenAI models) otherwise.
//
// The tokenizer's tables are about 16 MB of heap once loaded. A server that
// never counts (one that only relays /acp, or whose backend reports usage)
// would carry them through every full garbage collection, which then takes
// twice as long and stalls every stream it serves; so they load on the first
// count.
import type { ChatMessage, Usage } from "../../protocol/v1.ts";

/** Tokens OpenAI's chat format adds around each message, and to prime the reply. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

type CountTokens = (text: string) => number;

let tokenizer: Promise<CountTokens> | undefined;

function loadTokenizer(): Promise<CountTokens> {
  tokenizer ??= import("gpt-tokenizer").then((m) => m.countTokens);
  return tokenizer;
}

function countWith(countTokens: CountTokens, text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

function countPromptWith(countTokens: CountTokens, messages: readonly ChatMessage[]): number {
  let total = TOKENS_PER_REPLY;
  for (const m of messages) total += TOKENS_PER_MESSAGE + countWith(countTokens, m.role) + countWith(countTokens, m.content);
  return total;
}

export interface UsageCounts {
  prompt: number;
  /** Visible output, without the reasoning. */
  completion: number;
  reasoning: number;
  cached?: number;
}

/** The full usage object of the spec ("usage fields"), every detail present. */
export function makeUsage(counts: UsageCounts): Usage {
  const completion = counts.completion + counts.reasoning;
  return {
    prompt_tokens: counts.prompt,
    completion_tokens: completion,
    total_tokens: counts.prompt + completion,
    prompt_tokens_details: { text_tokens: counts.prompt, audio_tokens: 0, image_tokens: 0, cached_tokens: counts.cached ?? 0 },
    completion_tokens_details: {
      reasoning_tokens: counts.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
    num_sources_used: 0,
  };
}

/** Usage counted from the request and the produced text. */
export async function countedUsage(messages: readonly ChatMessage[], content: string, reasoning: string): Promise<Usage> {
  const countTokens = await loadTokenizer();
  return makeUsage({
    prompt: countPromptWith(countTokens, messages),
    completion: countWith(countTokens, content),
    reasoning: countWith(countTokens, reasoning),
  });
}

function int(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * An upstream provider's usage with every field of the spec filled in: what
 * it reported is kept, what it left out is zero. Undefined when it reported
 * no token counts: those are then counted (`countedUsage`).
 */
export function completeUsage(reported: unknown): Usage | undefined {
  const r = record(reported);
  const prompt = int(r["prompt_tokens"]);
  const completion = int(r["completion_tokens"]);
  if (prompt === undefined || completion === undefined) return undefined;
  const pd = record(r["prompt_tokens_details"]);
  const cd = record(r["completion_tokens_details"]);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: int(r["total_tokens"]) ?? prompt + completion,
    prompt_tokens_details: {
      text_tokens: int(pd["text_tokens"]) ?? prompt,
      audio_tokens: int(pd["audio_tokens"]) ?? 0,
      image_tokens: int(pd["image_tokens"]) ?? 0,
      cached_tokens: int(pd["cached_tokens"]) ?? 0,
    },
    completion_tokens_details: {
      reasoning_tokens: int(cd["reasoning_tokens"]) ?? 0,
      audio_tokens: int(cd["audio_tokens"]) ?? 0,
      accepted_prediction_tokens: int(cd["accepted_prediction_tokens"]) ?? 0,
      rejected_prediction_tokens: int(cd["rejected_prediction_tokens"]) ?? 0,
    },
    num_sources_used: int(r["num_sources_used"]) ?? 0,
  };
}
