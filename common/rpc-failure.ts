// A JSON-RPC error as a thrown value: an agent's error response becomes one,
// a host handler throws one to answer the agent with that error, and the
// hub, the control server and the devices throw one to answer a client.
import { ErrorCode } from "../protocol/jsonrpc.ts";

export class RpcFailure extends Error {
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcFailure";
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  /** The JSON-RPC error object this failure travels as. */
  toJson(): { code: number; message: string; data?: unknown } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }

  static internal(message: string, data?: unknown): RpcFailure {
    return new RpcFailure(ErrorCode.InternalError, message, data);
  }

  static invalidParams(message: string, data?: unknown): RpcFailure {
    return new RpcFailure(ErrorCode.InvalidParams, message, data);
  }

  static methodNotFound(method: string): RpcFailure {
    return new RpcFailure(ErrorCode.MethodNotFound, `method not found: ${method}`);
  }

  /** Any thrown value as an RpcFailure: RpcFailures and JSON-RPC error shapes keep their code. */
  static from(error: unknown): RpcFailure {
    if (error instanceof RpcFailure) return error;
    if (error instanceof Error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === "number" && Number.isInteger(code)) return new RpcFailure(code, error.message, (error as { data?: unknown }).data);
      return RpcFailure.internal(error.message);
    }
    return RpcFailure.internal(String(error));
  }
}
