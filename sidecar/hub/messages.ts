// Small pure helpers on the messages the hub passes between clients and agents.
import type { InitializeResponse } from "@agentclientprotocol/sdk";
import { AcpExt } from "../../protocol/acp.ts";
import { isRecord, type JsonRpcRequest } from "../../protocol/jsonrpc.ts";

/**
 * `params` with its `sessionId` replaced: a shallow copy, or the params
 * themselves when they hold that id already (a session the agent created
 * here has the agent's id as its public one). An update relayed so goes out
 * as the agent wrote it (common/ndjson.ts, lineReadFor).
 */
export function withSessionId(params: unknown, sessionId: string): Record<string, unknown> {
  if (isRecord(params) && params["sessionId"] === sessionId) return params;
  return { ...(isRecord(params) ? params : {}), sessionId };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The agent's `initialize` answer as remote clients get it: the protocol
 * version both speak, and the session methods the sidecar serves itself always on;
 * `ownFields` go under `_meta.acpRemote` too (what this connection may do, e.g. Web Push).
 */
export function clientInitializeResult(init: InitializeResponse, request: JsonRpcRequest, ownFields: Record<string, unknown> = {}): Record<string, unknown> {
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
    // And what ACP has no field for, under the server's own `_meta` key:
    // session/new's request key, the v2 draft's state updates, and pages of a
    // history.
    _meta: withOwnMeta(init._meta, { [AcpExt.sessionNewRequestKey]: true, [AcpExt.stateUpdates]: true, [AcpExt.historyPages]: true, ...ownFields }),
  };
}

/** `meta` with `fields` added under the server's own key, beside what is there. */
function withOwnMeta(meta: unknown, fields: Record<string, unknown>): Record<string, unknown> {
  const all = isRecord(meta) ? meta : {};
  const ours = all[AcpExt.metaKey];
  return { ...all, [AcpExt.metaKey]: { ...(isRecord(ours) ? ours : {}), ...fields } };
}
