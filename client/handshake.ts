// One connection of the relay, from the open to the answer to `initialize`.
// The first time the editor's own initialize goes out and its answer is
// returned for the editor; on a reconnect the relay sends a copy under an id
// of its own. The wait is bounded, and ends early when the connection closes.
import { Acp } from "../protocol/acp.ts";
import { idKey, isResponse, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from "../protocol/jsonrpc.ts";
import { withDeadline } from "./backoff.ts";
import type { RelayRequests } from "./relay-requests.ts";
import { ClientTransportError, TransportErrorCode, type ClientTransport } from "./transport.ts";

export interface HandshakeOptions {
  /** The editor's initialize request. */
  initialize: JsonRpcRequest;
  /** Sends the editor's own request (true) or a copy under the relay's id (false). */
  first: boolean;
  own: RelayRequests;
  /** Time to wait for the answer to initialize, in milliseconds. */
  timeoutMs: number;
  /** False once the relay has moved on to another connection: this one's events are ignored then. */
  isCurrent: () => boolean;
  /** Every other message of the server on this connection. */
  onMessage: (message: JsonRpcMessage) => void;
  /** The connection ended (after the handshake too). */
  onLost: (error: ClientTransportError | undefined) => void;
  log: (line: string) => void;
}

/** Wires `transport` to the relay, opens it and runs initialize; resolves with the answer. */
export async function handshake(transport: ClientTransport, options: HandshakeOptions): Promise<JsonRpcResponse> {
  const { initialize, first } = options;
  let firstAnswer: ((r: JsonRpcResponse) => void) | undefined;
  const firstResponse = new Promise<JsonRpcResponse>((resolve) => {
    firstAnswer = resolve;
  });
  transport.onmessage = (message) => {
    if (!options.isCurrent()) return;
    if (first && isResponse(message) && idKey(message.id) === idKey(initialize.id)) {
      firstAnswer?.(message);
      return;
    }
    options.onMessage(message);
  };
  transport.onerror = (error) => options.log(error.message);
  let failure: ClientTransportError | undefined;
  let failed: (() => void) | undefined;
  const closed = new Promise<never>((_, reject) => {
    failed = () => reject(failure ?? new ClientTransportError(TransportErrorCode.ConnectionLost, "the connection closed during initialize"));
  });
  closed.catch(() => {});
  transport.onclose = (error) => {
    failure = error;
    if (!options.isCurrent()) return;
    failed?.();
    options.onLost(error);
  };
  await transport.start();
  const answered = first
    ? transport.send(initialize).then(() => firstResponse)
    : options.own.request(transport, Acp.agent.initialize, initialize.params);
  return withDeadline(
    Promise.race([answered, closed]),
    options.timeoutMs,
    () => new ClientTransportError(TransportErrorCode.Unreachable, `no answer to initialize within ${options.timeoutMs} ms`),
  );
}

/** What the user can do about a first connection that failed, as a parenthesis to its message; "" when nothing. */
export function connectFailureHint(error: unknown): string {
  if (error instanceof ClientTransportError && error.code === TransportErrorCode.Unauthorized) return " (pass --token or set ACP_REMOTE_TOKEN)";
  if (error instanceof Error && /certificate/i.test(error.message)) return " (trust the server's certificate with --ca FILE, or accept any with --insecure)";
  return "";
}
