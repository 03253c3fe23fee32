// Wire shapes and names of the /v1 API (spec: deferred-completions.md, and the
// OpenAI chat completion shape its clients read). One module, so no call site
// spells a path or an object type.

export const V1_PREFIX = "/v1";

export const V1Path = {
  models: "/v1/models",
  chatCompletions: "/v1/chat/completions",
  /** Followed by `/{request_id}` (spec: GET {base_url}/v1/chat/deferred-completion/{request_id}). */
  deferredCompletion: "/v1/chat/deferred-completion",
} as const;

export const ObjectType = {
  completion: "chat.completion",
  chunk: "chat.completion.chunk",
  list: "list",
  model: "model",
  deferredDeleted: "chat.completion.deferred.deleted",
} as const;

/** `owned_by` of the models that are workspace agents. */
export const AGENT_OWNER = "acp-remote";

export type Role = "system" | "developer" | "user" | "assistant" | "tool";

/** One message of a request, its content flattened to text by validation. */
export interface ChatMessage {
  role: Role;
  content: string;
  name?: string;
}

/** A validated chat completion request. `raw` keeps every field for the upstream provider. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  deferred: boolean;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries the usage. */
  includeUsage: boolean;
  raw: Record<string, unknown>;
}

export type FinishReason = "stop" | "length" | "content_filter" | "tool_calls";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { text_tokens: number; audio_tokens: number; image_tokens: number; cached_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
  num_sources_used: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  refusal: string | null;
  reasoning_content?: string;
}

/** Spec: "Completion result (HTTP 200)"; a deferred result has the same body (spec: What the service does, 5). */
export interface ChatCompletion {
  id: string;
  object: typeof ObjectType.completion;
  created: number;
  model: string;
  choices: Array<{ index: number; message: AssistantMessage; finish_reason: FinishReason | string }>;
  usage: Usage;
  system_fingerprint: string;
}

export interface ChunkDelta {
  role?: "assistant";
  content?: string;
  reasoning_content?: string;
}

export interface ChatCompletionChunk {
  id: string;
  object: typeof ObjectType.chunk;
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{ index: number; delta: ChunkDelta; finish_reason: FinishReason | string | null }>;
  usage?: Usage | null;
}

export interface ModelInfo {
  id: string;
  object: typeof ObjectType.model;
  created: number;
  owned_by: string;
}

export interface DeferredSubmission {
  request_id: string;
}
