// The editor's messages, bounded in depth (common/json-depth.ts) before the
// control connection sees them. vscode-jsonrpc parses each message itself, so
// the bound is a walk of the parsed value, which the editor's light traffic
// affords. A message nested deeper never reaches a handler: a request is
// answered -32600 (JSON-RPC's Invalid Request) through `answer`, a response
// becomes a -32600 error for the request it answers, which then fails instead
// of waiting, and a notification is dropped. Each is reported through
// `onError`, for the log.
import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from "vscode-jsonrpc";
import { ErrorCode, errorResponse, type JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import { jsonValueDeeperThan, tooDeepReason } from "../../common/json-depth.ts";

export class DepthBoundReader extends AbstractMessageReader implements MessageReader {
  readonly #inner: MessageReader;
  readonly #maxDepth: number;
  readonly #answer: (response: JsonRpcResponse) => void;

  constructor(inner: MessageReader, maxDepth: number, answer: (response: JsonRpcResponse) => void) {
    super();
    this.#inner = inner;
    this.#maxDepth = maxDepth;
    this.#answer = answer;
    inner.onError((error) => this.fireError(error));
    inner.onClose(() => this.fireClose());
    inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  listen(callback: DataCallback): Disposable {
    return this.#inner.listen((message) => {
      if (!jsonValueDeeperThan(message, this.#maxDepth)) {
        callback(message);
        return;
      }
      const reason = tooDeepReason(this.#maxDepth);
      const { id, method } = message as { id?: unknown; method?: unknown };
      const hasId = typeof id === "string" || typeof id === "number";
      if (typeof method === "string") {
        this.fireError(new Error(`refused a ${JSON.stringify(method)} message: ${reason}`));
        if (hasId) this.#answer(errorResponse(id, ErrorCode.InvalidRequest, reason));
      } else if (hasId) {
        this.fireError(new Error(`an answer to request ${JSON.stringify(id)} failed: ${reason}`));
        callback(errorResponse(id, ErrorCode.InvalidRequest, reason) as Message);
      } else {
        this.fireError(new Error(`refused a message: ${reason}`));
      }
    });
  }

  override dispose(): void {
    super.dispose();
    this.#inner.dispose();
  }
}
