// The editor's client of the sidecar's /v1 deferred API (docs/deferred.md).
// It imports nothing from VS Code, so it runs (and is tested) in plain Node.
import { Agent, fetch, type Dispatcher } from "undici";
import { isLoopbackHost } from "../../common/loopback.ts";

export interface ServerAddress {
  url: string;
  token: string;
}

export interface ModelEntry {
  id: string;
  owned_by: string;
}

/** The parts of a chat completion the editor shows. */
export interface CompletionResult {
  id: string;
  created: number;
  model: string;
  choices: Array<{ index: number; message: { content: string | null; reasoning_content?: string; refusal?: string | null }; finish_reason: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; completion_tokens_details?: { reasoning_tokens?: number } };
}

export type FetchOutcome =
  | { kind: "pending" }
  | { kind: "ready"; completion: CompletionResult }
  /** The job failed: its one answer was this error. */
  | { kind: "failed"; status: number; message: string }
  /** Unknown, already fetched, or expired (404). */
  | { kind: "gone" };

export class DeferredApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "DeferredApiError";
    this.status = status;
  }
}

/**
 * The sidecar on this machine may serve TLS with the self-signed certificate
 * it made; the editor started it and trusts it on loopback only.
 */
function dispatcherFor(url: URL): Dispatcher | undefined {
  if (url.protocol === "https:" && isLoopbackHost(url.hostname)) return new Agent({ connect: { rejectUnauthorized: false } });
  return undefined;
}

async function errorMessage(response: { status: number; text(): Promise<string> }): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // not JSON
  }
  return text || `HTTP ${response.status}`;
}

export class DeferredApi {
  readonly #base: string;
  readonly #token: string;
  readonly #dispatcher: Dispatcher | undefined;

  constructor(server: ServerAddress) {
    this.#base = `${server.url.replace(/\/+$/, "")}/v1`;
    this.#token = server.token;
    this.#dispatcher = dispatcherFor(new URL(server.url));
  }

  async #request(method: string, path: string, body?: unknown) {
    return fetch(`${this.#base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
    });
  }

  async models(): Promise<ModelEntry[]> {
    const response = await this.#request("GET", "/models");
    if (!response.ok) throw new DeferredApiError(response.status, await errorMessage(response));
    const body = (await response.json()) as { data?: ModelEntry[] };
    return body.data ?? [];
  }

  /** POST with `deferred: true`; returns the request_id. */
  async submit(model: string, prompt: string): Promise<string> {
    const response = await this.#request("POST", "/chat/completions", {
      model,
      messages: [{ role: "user", content: prompt }],
      deferred: true,
    });
    if (!response.ok) throw new DeferredApiError(response.status, await errorMessage(response));
    const body = (await response.json()) as { request_id?: unknown };
    if (typeof body.request_id !== "string") throw new DeferredApiError(response.status, "the server answered without a request_id");
    return body.request_id;
  }

  /** One GET of the deferred result. A 200 consumes it: the server answers it exactly once. */
  async fetchOnce(requestId: string): Promise<FetchOutcome> {
    const response = await this.#request("GET", `/chat/deferred-completion/${encodeURIComponent(requestId)}`);
    if (response.status === 202) {
      await response.body?.cancel();
      return { kind: "pending" };
    }
    if (response.status === 200) return { kind: "ready", completion: (await response.json()) as CompletionResult };
    if (response.status === 404) {
      await response.body?.cancel();
      return { kind: "gone" };
    }
    const message = await errorMessage(response);
    // A failed job (5xx) answers once; other statuses say the request itself was wrong.
    if (response.status >= 500) return { kind: "failed", status: response.status, message };
    throw new DeferredApiError(response.status, message);
  }

  /** DELETE (beyond the spec): cancels and discards the job. False when it was already gone. */
  async cancel(requestId: string): Promise<boolean> {
    const response = await this.#request("DELETE", `/chat/deferred-completion/${encodeURIComponent(requestId)}`);
    await response.body?.cancel();
    if (response.status === 404) return false;
    if (!response.ok) throw new DeferredApiError(response.status, `cancel failed with HTTP ${response.status}`);
    return true;
  }
}
