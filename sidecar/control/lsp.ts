// The four LSP lifecycle messages the control protocol borrows, so that an
// editor's language-client library can start, supervise and stop the sidecar
// as it does a language server (docs/control-protocol.md, "Handshake").
import { NotificationType, NotificationType0, RequestType, RequestType0 } from "vscode-jsonrpc";
import type { ControlInitOptions } from "../../protocol/control.ts";

export interface LspInitializeParams {
  processId?: number | null;
  clientInfo?: { name: string; version?: string };
  initializationOptions?: Partial<ControlInitOptions>;
}

export interface LspInitializeResult {
  capabilities: Record<string, never>;
  serverInfo: { name: string; version: string };
}

export const Lsp = {
  initialize: new RequestType<LspInitializeParams, LspInitializeResult, void>("initialize"),
  initialized: new NotificationType<Record<string, never>>("initialized"),
  shutdown: new RequestType0<null, void>("shutdown"),
  exit: new NotificationType0("exit"),
} as const;

/** JSON-RPC error codes the control protocol answers with (LSP's where LSP has one). */
export const ControlErrorCode = {
  InvalidParams: -32602,
  InternalError: -32603,
  /** LSP: a request before `initialize` (or, here, before the listener runs). */
  ServerNotInitialized: -32002,
  /** A session id the hub does not know. */
  UnknownSession: -32001,
  /** The method exists but this sidecar cannot do it (no upstream provider, ...). */
  Unsupported: -32004,
} as const;
