// The one place where /v1 turns errors into statuses and OpenAI-shaped bodies
// (design: Deferred completions, decision 1): `{"error": {"message", "type",
// "param", "code"}}`, which the `openai` client and xAI's SDKs read.
import type { HttpResponse } from "../http/types.ts";
import { sendJson } from "./respond.ts";
import { StoreUnavailableError } from "../store/shared-store.ts";
import { tooDeepReason } from "../../common/json-depth.ts";

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export class V1Error extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    options: { type?: string; code?: string | null; param?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "V1Error";
    this.status = status;
    this.type = options.type ?? defaultType(status);
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function defaultType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** 400: the body is not a valid chat completion request; `param` names the field. */
export function invalidRequest(message: string, param: string | null, code = "invalid_value"): V1Error {
  return new V1Error(400, message, { param, code });
}

/**
 * 400: the body nests deeper than the bound; a value that deep would overflow
 * the stack where the request is next serialized (a deferred job's row).
 */
export function tooDeep(maxDepth: number): V1Error {
  return invalidRequest(`The request body is refused: ${tooDeepReason(maxDepth)}.`, null, "nested_too_deep");
}

/** 401: missing or wrong key (design: decision 8 of the transport, shared by /v1). */
export function unauthorized(): V1Error {
  return new V1Error(401, "Missing or invalid API key: send `Authorization: Bearer <key>`.", {
    code: "invalid_api_key",
    headers: { "www-authenticate": 'Bearer realm="acp-remote"' },
  });
}

/**
 * A V1Error without a stack trace, for answers on hot paths: capturing the
 * stack is most of the cost of an error object, and these are answers to the
 * client, not faults of the sidecar, so nobody reads it.
 */
function answer(status: number, message: string, options: ConstructorParameters<typeof V1Error>[2]): V1Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new V1Error(status, message, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** 404 for an id that is unknown, already retrieved, expired, or another key's (design: decision 1). A poller meets it at every id it took already, so it carries no stack. */
export function unknownRequestId(id: string): V1Error {
  return answer(404, `No deferred completion with request_id "${id}": unknown, already retrieved, or expired.`, {
    param: "request_id",
    code: "not_found",
  });
}

export function unknownModel(model: string): V1Error {
  return new V1Error(404, `The model "${model}" does not exist. GET /v1/models lists the models.`, {
    param: "model",
    code: "model_not_found",
  });
}

export function unknownPath(path: string): V1Error {
  return new V1Error(404, `No route for ${path}.`, { code: "unknown_url" });
}

export function methodNotAllowed(method: string, allowed: readonly string[]): V1Error {
  return new V1Error(405, `Method ${method} is not allowed here; use ${allowed.join(" or ")}.`, {
    code: "method_not_allowed",
    headers: { allow: allowed.join(", ") },
  });
}

export function bodyTooLarge(limit: number): V1Error {
  return new V1Error(413, `The request body is larger than ${limit} bytes.`, { code: "request_too_large" });
}

export function unsupportedMediaType(got: string | undefined): V1Error {
  return new V1Error(415, `Content-Type must be application/json${got ? `, not ${got}` : ""}.`, {
    code: "unsupported_media_type",
  });
}

/** 429 with `Retry-After` in whole seconds (design: decision 1). */
export function rateLimited(message: string, retryAfterSeconds: number): V1Error {
  return new V1Error(429, message, {
    code: "rate_limit_exceeded",
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}

/** 503 with `Retry-After`: the store cannot be reached now (nothing was done). */
export function storeUnavailable(message: string, retryAfterSeconds: number): V1Error {
  return new V1Error(503, message, {
    code: "store_unavailable",
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}

/** 502: the upstream provider failed or answered an error. */
export function upstreamFailed(message: string): V1Error {
  return new V1Error(502, message, { code: "upstream_error" });
}

/** 500: the agent ended the turn with an error, exited, or could not start. */
export function backendFailed(message: string): V1Error {
  return new V1Error(500, message, { code: "backend_error" });
}

export function timedOut(ms: number): V1Error {
  return new V1Error(504, `The completion did not finish within ${ms} ms.`, { code: "timeout" });
}

/** Anything that is not a V1Error is a 500 whose message is kept (the sidecar is the user's own). */
export function toV1Error(error: unknown): V1Error {
  if (error instanceof V1Error) return error;
  if (error instanceof StoreUnavailableError) return storeUnavailable(error.message, error.retryAfterSeconds);
  const message = error instanceof Error ? error.message : String(error);
  return new V1Error(500, message || "Internal error.", { code: "internal_error" });
}

/** Writes `error` as the response, unless the headers already left (then it only ends it). */
export function sendError(res: HttpResponse, error: unknown): void {
  const e = toV1Error(error);
  sendStoredError(res, e.status, e.body(), e.headers);
}

/** Writes a status and error body, e.g. one stored for a failed deferred job (design: decision 2). */
export function sendStoredError(res: HttpResponse, status: number, body: ErrorBody, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  sendJson(res, status, body, headers);
}
