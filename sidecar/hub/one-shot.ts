// One-shot turns for /v1: a fresh agent session, one prompt, then the session
// is closed. It is never stored, listed or loadable; its updates go to the
// caller only, its permission requests follow the caller's policy. It works
// in a folder of the person it runs for, as their sessions do.
import { randomUUID } from "node:crypto";
import type { ContentBlock, PromptResponse, SessionUpdate } from "@agentclientprotocol/sdk";
import { Acp } from "../../protocol/acp.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import type { LocalHost } from "../bridge/local-host.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import type { PermissionBroker } from "./permissions.ts";
import type { PersonFolders } from "./person-folders.ts";
import { HubSession } from "./session.ts";
import { personName, type EditorLink, type OneShotOptions, type OneShotResult } from "./types.ts";

export interface OneShotDeps {
  agents: AgentSessions;
  permissions: PermissionBroker;
  localHost: LocalHost;
  folders: PersonFolders;
  editor: () => EditorLink | undefined;
  /** The server's own person's folder; another person works in their first folder. */
  defaultCwd: string;
}

export async function runOneShot(deps: OneShotDeps, agentName: string, prompt: ContentBlock[], options: OneShotOptions): Promise<OneShotResult> {
  const agent = deps.agents.get(agentName);
  const own = await deps.folders.confineNewSession(options.owner, {});
  const cwd = typeof own["cwd"] === "string" ? own["cwd"] : (options.cwd ?? deps.defaultCwd);
  await agent.process.ready();
  const created = (await agent.process.request(Acp.agent.session.new, { cwd, mcpServers: [] }, options.signal)) as { sessionId: string };
  const now = Date.now();
  const session = new HubSession(
    // Its own id, never the agent's: agents number sessions alike, and a stored
    // session may have that id (its permission requests and terminals are
    // found by the public id).
    { id: `one-shot-${randomUUID()}`, agent: agentName, cwd, roots: [cwd], mcpServers: [], ownerId: options.owner, ownerLabel: personName(options.owner), createdAt: now, updatedAt: now },
    { ephemeral: true },
  );
  session.agentSessionId = created.sessionId;
  session.agentGeneration = agent.process.generation;
  session.onUpdate = (update) => options.onUpdate(update as SessionUpdate);
  session.oneShotPermissions = options.permissions ?? (deps.editor() ? "editor" : "reject");
  session.oneShotRequestId = options.requestId;
  agent.sessions.set(created.sessionId, session);
  // Cancellation is ACP's session/cancel: the turn then ends with `cancelled`.
  const onAbort = (): void => agent.process.notify(Acp.agent.session.cancel, { sessionId: created.sessionId });
  options.signal.addEventListener("abort", onAbort, { once: true });
  try {
    // Aborted while the agent started or the session was created: the listener above will not fire.
    if (options.signal.aborted) return { stopReason: "cancelled" };
    const response = (await agent.process.request(Acp.agent.session.prompt, { sessionId: created.sessionId, prompt })) as PromptResponse;
    const result: OneShotResult = { stopReason: response.stopReason };
    const usage = (response as { usage?: Record<string, unknown> }).usage;
    if (isRecord(usage)) result.usage = usage as NonNullable<OneShotResult["usage"]>;
    return result;
  } finally {
    options.signal.removeEventListener("abort", onAbort);
    deps.permissions.cancelSession(session.id);
    agent.sessions.delete(created.sessionId);
    void deps.agents.closeOnAgent(agent, created.sessionId);
    deps.localHost.releaseSession(session.id);
  }
}
