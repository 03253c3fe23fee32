// JSON-RPC over a Transport: numbered requests with their pending answers,
// notifications, answers to the server's requests, and the dispatch of what
// arrives. Every pending request fails when the link ends, so no caller waits
// for an answer that went down with the old connection.
import type { JsonRpcError, JsonRpcId, JsonRpcMessage, JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import { isNotification, isRequest, isResponse } from "../../protocol/jsonrpc.ts";

/** An error answer of the server, or the end of the link while waiting. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(error: JsonRpcError) {
    super(error.message);
    this.name = "RpcError";
    this.code = error.code;
    this.data = error.data;
  }
}

export interface RpcHandlers {
  /** A request of the server; answer it with `respond`. */
  onRequest(request: JsonRpcRequest): void;
  onNotification(method: string, params: unknown): void;
}

type Send = (message: JsonRpcMessage, sessionId?: string) => void;

interface Pending {
  resolve(result: unknown): void;
  reject(error: RpcError): void;
}

export class RpcPeer {
  readonly #send: Send;
  readonly #handlers: RpcHandlers;
  readonly #pending = new Map<JsonRpcId, Pending>();
  #nextId: number;

  /** `firstId` follows the ids the transport used while opening (initialize). */
  constructor(send: Send, handlers: RpcHandlers, firstId: number) {
    this.#send = send;
    this.#handlers = handlers;
    this.#nextId = firstId;
  }

  request<T>(method: string, params: unknown, sessionId?: string): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
      this.#send({ jsonrpc: "2.0", id, method, params }, sessionId);
    });
  }

  notify(method: string, params: unknown, sessionId?: string): void {
    this.#send({ jsonrpc: "2.0", method, params }, sessionId);
  }

  respond(id: JsonRpcId, result: unknown, sessionId?: string): void {
    this.#send({ jsonrpc: "2.0", id, result }, sessionId);
  }

  respondError(id: JsonRpcId, error: JsonRpcError, sessionId?: string): void {
    this.#send({ jsonrpc: "2.0", id, error }, sessionId);
  }

  receive(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new RpcError(message.error));
      else pending.resolve(message.result);
    } else if (isRequest(message)) {
      this.#handlers.onRequest(message);
    } else if (isNotification(message)) {
      this.#handlers.onNotification(message.method, message.params);
    }
  }

  /** The link ended: every request still waiting fails with `reason`. */
  failAll(reason: string): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(new RpcError({ code: LINK_LOST, message: reason }));
  }
}

/** The code of an RpcError raised because the link ended, not by the server. */
export const LINK_LOST = -1;
