// Where the answer to a server's request goes over Streamable HTTP: with the
// `Acp-Session-Id` of the stream that carried the request. Requests the server
// withdrew (`$/cancel_request`) are kept a while for a late answer, at most
// DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT, oldest first out, since a client
// need not answer them.
import { idKey, isRecord, type JsonRpcId } from "../protocol/jsonrpc.ts";
import { DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT } from "./limits.ts";

export class AnswerRoutes {
  /** Server requests by id key, with the session whose stream carried them. */
  readonly #sessions = new Map<string, string | undefined>();
  /** Those of #sessions the server withdrew, oldest first. */
  readonly #withdrawn = new Set<string>();

  /** Requests whose answer is still routed; for diagnostics. */
  get size(): number {
    return this.#sessions.size;
  }

  received(id: JsonRpcId, sessionId: string | undefined): void {
    this.#sessions.set(idKey(id), sessionId);
  }

  /** The client answers request `id`: the session its answer goes with, and the route is forgotten. */
  answered(id: JsonRpcId): string | undefined {
    const key = idKey(id);
    const sessionId = this.#sessions.get(key);
    this.#sessions.delete(key);
    this.#withdrawn.delete(key);
    return sessionId;
  }

  /** The server withdrew one of its requests (`$/cancel_request` params): its route is kept only for a while. */
  withdrawn(params: unknown): void {
    const requestId = isRecord(params) ? params["requestId"] : undefined;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const key = idKey(requestId);
    if (!this.#sessions.has(key)) return;
    this.#withdrawn.add(key);
    if (this.#withdrawn.size <= DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT) return;
    const oldest = this.#withdrawn.values().next().value as string;
    this.#withdrawn.delete(oldest);
    this.#sessions.delete(oldest);
  }

  clear(): void {
    this.#sessions.clear();
    this.#withdrawn.clear();
  }
}
