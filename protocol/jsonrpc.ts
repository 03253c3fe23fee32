// JSON-RPC 2.0 message shapes as they travel through the sidecar, and the
// guards that tell them apart. Messages are passed on as parsed objects; the
// sidecar reads only the fields it routes on (method, id, params.sessionId).

export type JsonRpcId = string | number | null;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Standard and ACP error codes. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** ACP: authentication required. */
  AuthRequired: -32000,
  /** Transport: the connection or session is unknown. */
  ResourceNotFound: -32002,
  /** The request was cancelled (ACP `$/cancel_request`). */
  RequestCancelled: -32800,
} as const;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isRequest(m: JsonRpcMessage): m is JsonRpcRequest {
  return "method" in m && "id" in m && m.id !== undefined;
}

export function isNotification(m: JsonRpcMessage): m is JsonRpcNotification {
  return "method" in m && !("id" in m && m.id !== undefined);
}

export function isResponse(m: JsonRpcMessage): m is JsonRpcResponse {
  return !("method" in m) && "id" in m;
}

/** The `sessionId` a message's params carry, if any. */
export function paramsSessionId(m: JsonRpcMessage): string | undefined {
  if (!("method" in m) || !isRecord(m.params)) return undefined;
  const id = m.params["sessionId"];
  return typeof id === "string" ? id : undefined;
}

/**
 * Checks that a parsed body is one JSON-RPC 2.0 message (not a batch). Returns
 * a reason when it is not, for an `InvalidRequest` error.
 */
export function validateMessage(value: unknown): { ok: true; message: JsonRpcMessage } | { ok: false; reason: string } {
  if (!isRecord(value)) return { ok: false, reason: "a JSON-RPC message must be an object" };
  if (value["jsonrpc"] !== "2.0") return { ok: false, reason: 'jsonrpc must be "2.0"' };
  const hasId = "id" in value;
  const id = value["id"];
  if (hasId && !(typeof id === "string" || typeof id === "number" || id === null)) {
    return { ok: false, reason: "id must be a string, a number or null" };
  }
  if ("method" in value) {
    if (typeof value["method"] !== "string" || value["method"].length === 0) {
      return { ok: false, reason: "method must be a non-empty string" };
    }
    return { ok: true, message: value as unknown as JsonRpcMessage };
  }
  if (!hasId) return { ok: false, reason: "a message needs a method or an id" };
  if (!("result" in value) && !("error" in value)) {
    return { ok: false, reason: "a response needs a result or an error" };
  }
  return { ok: true, message: value as unknown as JsonRpcMessage };
}

export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** A map key for a JSON-RPC id that keeps 1 and "1" apart. */
export function idKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}
