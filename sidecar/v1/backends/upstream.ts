// An optional upstream OpenAI-compatible provider (`--upstream-url`). Its
// models are listed beside the agents and its completions are passed through:
// the request keeps every field the client sent (minus `deferred`, which is
// the sidecar's business), the answer keeps every field the provider sent,
// with the fields of the spec that it left out filled in.
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ModelInfo } from "../../../protocol/v1.ts";
import { ObjectType } from "../../../protocol/v1.ts";
import type { Backend, CompletionRun } from "./types.ts";
import { upstreamFailed } from "../errors.ts";
import { completeUsage, countedUsage } from "../usage.ts";
import { DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS, DEFAULT_V1_UPSTREAM_MODELS_TTL_MS } from "../../limits.ts";
import { readUpstreamEvents } from "./upstream-events.ts";

/** undici, loaded at the first request to a provider: 5 MB of heap that a server without one would hold, and every full collection would mark. */
function undici(): Promise<typeof import("undici")> {
  return import("undici");
}

/** Concurrency key of the upstream provider. */
export const UPSTREAM_BACKEND_KEY = "upstream";

export interface UpstreamOptions {
  /** Base URL of the provider's API, with its version path (e.g. `https://api.openai.com/v1`). */
  url: string;
  apiKey?: string | null;
  clock?: () => number;
  modelsTtlMs?: number;
  /** Largest event of a streamed answer, in characters; a longer one fails the completion with 502. */
  maxEventChars?: number;
}

export interface UpstreamBackend extends Backend {
  /** Replaces the API key (the editor keeps it in its secret storage). */
  setKey(key: string | null): void;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The provider's error message, from an OpenAI-shaped error body when it sent one. */
function errorMessage(status: number, text: string): string {
  let detail = text.slice(0, 500);
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body) && isObject(body["error"]) && typeof body["error"]["message"] === "string") detail = body["error"]["message"];
  } catch {
    // not JSON: keep the text
  }
  return `The upstream provider answered ${status}${detail ? `: ${detail}` : ""}`;
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

/** Every field of the spec present, the provider's own values kept. */
async function normalize(body: Json, request: ChatRequest, run: CompletionRun): Promise<ChatCompletion> {
  const choices = Array.isArray(body["choices"]) ? body["choices"] : [];
  const normalized = choices.map((c: unknown, index) => {
    const choice = isObject(c) ? c : {};
    const message = isObject(choice["message"]) ? choice["message"] : {};
    return {
      ...choice,
      index: typeof choice["index"] === "number" ? choice["index"] : index,
      message: {
        ...message,
        role: "assistant" as const,
        content: typeof message["content"] === "string" ? message["content"] : "",
        refusal: typeof message["refusal"] === "string" ? message["refusal"] : null,
      },
      finish_reason: typeof choice["finish_reason"] === "string" ? choice["finish_reason"] : "stop",
    };
  });
  const first = normalized[0]?.message;
  const reasoning = typeof (first as Json | undefined)?.["reasoning_content"] === "string" ? String((first as Json)["reasoning_content"]) : "";
  return {
    ...body,
    id: typeof body["id"] === "string" ? body["id"] : run.id,
    object: ObjectType.completion,
    created: typeof body["created"] === "number" ? body["created"] : run.created,
    model: typeof body["model"] === "string" ? body["model"] : request.model,
    choices: normalized,
    usage: completeUsage(body["usage"]) ?? (await countedUsage(request.messages, first?.content ?? "", reasoning)),
    system_fingerprint: typeof body["system_fingerprint"] === "string" ? body["system_fingerprint"] : "upstream",
  };
}

/** A JSON body or event from the provider; anything else is the provider's fault (502), not ours (500). */
function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw upstreamFailed(`The upstream provider sent ${what} that is not JSON: ${text.slice(0, 200)}`);
  }
}

export function createUpstreamBackend(options: UpstreamOptions): UpstreamBackend {
  let key = options.apiKey ?? null;
  const clock = options.clock ?? Date.now;
  const ttl = options.modelsTtlMs ?? DEFAULT_V1_UPSTREAM_MODELS_TTL_MS;
  const maxEventChars = options.maxEventChars ?? DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS;
  let cache: { at: number; models: ModelInfo[] } | undefined;

  const headers = (): Record<string, string> => ({
    accept: "application/json",
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  });

  async function fetchModels(): Promise<ModelInfo[]> {
    if (cache && clock() - cache.at < ttl) return cache.models;
    let response;
    try {
      response = await (await undici()).fetch(joinUrl(options.url, "models"), { headers: headers() });
    } catch (error) {
      throw upstreamFailed(`The upstream provider is unreachable: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await response.text();
    if (!response.ok) throw upstreamFailed(errorMessage(response.status, text));
    const body = parseJson(text, "a model list");
    const data = isObject(body) && Array.isArray(body["data"]) ? body["data"] : [];
    const models = data.filter(isObject).flatMap((m): ModelInfo[] =>
      typeof m["id"] === "string"
        ? [{
            ...m,
            id: m["id"],
            object: ObjectType.model,
            created: typeof m["created"] === "number" ? m["created"] : 0,
            owned_by: typeof m["owned_by"] === "string" ? m["owned_by"] : "upstream",
          }]
        : [],
    );
    cache = { at: clock(), models };
    return models;
  }

  return {
    setKey(next) {
      key = next;
      cache = undefined;
    },
    async models() {
      // The listing still shows the agents when the provider is down.
      try {
        return await fetchModels();
      } catch {
        return [];
      }
    },
    async resolve(model) {
      const models = await fetchModels();
      return models.some((m) => m.id === model) ? UPSTREAM_BACKEND_KEY : undefined;
    },
    async complete(request, run) {
      const { deferred: _deferred, ...rest } = request.raw;
      const body: Json = { ...rest, stream: run.onChunk !== undefined };
      if (!run.onChunk) delete body["stream_options"];
      let response;
      try {
        response = await (await undici()).fetch(joinUrl(options.url, "chat/completions"), {
          method: "POST",
          headers: { ...headers(), "content-type": "application/json", ...(run.onChunk ? { accept: "text/event-stream" } : {}) },
          body: JSON.stringify(body),
          signal: run.signal,
        });
      } catch (error) {
        if (run.signal.aborted) throw run.signal.reason;
        throw upstreamFailed(`The upstream provider is unreachable: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!response.ok || !response.body) throw upstreamFailed(errorMessage(response.status, await response.text()));
      const onChunk = run.onChunk;
      if (!onChunk) {
        const parsed = parseJson(await response.text(), "a completion");
        if (!isObject(parsed)) throw upstreamFailed("The upstream provider answered a body that is not a JSON object.");
        return normalize(parsed, request, run);
      }
      let content = "";
      let finish = "stop";
      let usage: unknown;
      let last: Json = {};
      await readUpstreamEvents(response.body, maxEventChars, (data) => {
        const chunk = parseJson(data, "an event");
        if (!isObject(chunk)) return;
        last = chunk;
        const choice: unknown = Array.isArray(chunk["choices"]) ? chunk["choices"][0] : undefined;
        if (isObject(choice)) {
          const delta = choice["delta"];
          if (isObject(delta) && typeof delta["content"] === "string") content += delta["content"];
          if (typeof choice["finish_reason"] === "string") finish = choice["finish_reason"];
        }
        if (chunk["usage"]) usage = chunk["usage"];
        onChunk(chunk as unknown as ChatCompletionChunk);
      });
      return normalize(
        { ...last, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }], usage },
        request,
        run,
      );
    },
  };
}
