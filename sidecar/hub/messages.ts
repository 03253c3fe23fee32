// Small pure helpers on the messages the hub passes between clients and agents.
import type { InitializeResponse } from "@agentclientprotocol/sdk";
import { isRecord, type JsonRpcRequest } from "../../protocol/jsonrpc.ts";

/** `params` with its `sessionId` replaced (a shallow copy). */
export function withSessionId(params: unknown, sessionId: string): Record<string, unknown> {
  return { ...(isRecord(params) ? params : {}), sessionId };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The agent's `initialize` answer as remote clients get it: the protocol
 * version both speak, and the session methods the sidecar serves itself always on.
 */
export function clientInitializeResult(init: InitializeResponse, request: JsonRpcRequest): Record<string, unknown> {
  const capabilities = (init.agentCapabilities ?? {}) as Record<string, unknown>;
  const sessionCapabilities = isRecord(capabilities["sessionCapabilities"]) ? capabilities["sessionCapabilities"] : {};
  const requested = isRecord(request.params) ? request.params["protocolVersion"] : undefined;
  return {
    ...init,
    protocolVersion: typeof requested === "number" ? Math.min(requested, init.protocolVersion) : init.protocolVersion,
    // The sidecar serves these itself, whatever the agent offers: load and
    // resume from its journal, list, close and delete from its registry, and
    // the multi-client attach proposal.
    agentCapabilities: { ...capabilities, loadSession: true, sessionCapabilities: { ...sessionCapabilities, list: {}, resume: {}, close: {}, delete: {}, attach: {} } },
  };
}
