// What an agent process sends its client, routed: a permission request to the
// session's clients and the editor (first answer wins), `fs/*` and `terminal/*`
// to the editor (its own person's sessions only) or the sidecar's own host,
// anything else to the session's clients; `session/update`s journaled and
// passed to every follower.
import type { RequestPermissionOutcome, RequestPermissionRequest, SessionUpdate } from "@agentclientprotocol/sdk";
import { Acp } from "../../protocol/acp.ts";
import type { HistoryMark } from "../../protocol/history.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import type { LocalHost } from "../bridge/local-host.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import { withSessionId } from "./messages.ts";
import { CANCELLED, type PermissionBroker } from "./permissions.ts";
import { notifyClients, sessionPermissionClient } from "./session-clients.ts";
import type { HubSession } from "./session.ts";
import type { AgentEntry } from "./session-services.ts";
import { OWNER, type EditorLink, type OneShotPermissionPolicy } from "./types.ts";
import type { Log } from "../../protocol/log-line.ts";

/** Host requests an agent may send, served here or in the editor. */
const FS_METHODS: ReadonlySet<string> = new Set([Acp.client.fs.readTextFile, Acp.client.fs.writeTextFile]);
const TERMINAL_METHODS: ReadonlySet<string> = new Set(Object.values(Acp.client.terminal));

export interface AgentRequestsOptions {
  agents: AgentSessions;
  permissions: PermissionBroker;
  localHost: LocalHost;
  /** The folders the sidecar's own host confines a session's requests to. */
  hostRoots: (session: HubSession) => Promise<string[]>;
  editor: () => EditorLink | undefined;
  /** Journals an update of a stored session and tells the session's watchers (the editor, state listeners). */
  record: (session: HubSession, update: SessionUpdate) => void;
  /** Journals a mark of the session's history, for replays only (live clients learn it otherwise). */
  mark: (session: HubSession, mark: HistoryMark) => void;
  log: Log;
}

export class AgentRequests {
  readonly #options: AgentRequestsOptions;

  constructor(options: AgentRequestsOptions) {
    this.#options = options;
  }

  /** A request from an agent process to its client (the hub). */
  async request(agent: AgentEntry, method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const session = this.#options.agents.sessionOf(agent, params);
    if (!session) throw new RpcFailure(ErrorCode.InvalidParams, `${method}: unknown sessionId`);
    // A session just created has its public id once the store gave it one.
    if (session.naming) await session.naming.done;
    const publicParams = withSessionId(params, session.id);

    if (method === Acp.client.session.requestPermission) {
      const request = publicParams as RequestPermissionRequest;
      if (session.ephemeral) return { outcome: await this.#oneShotPermission(agent, session, request, signal) };
      const client = session.clients.size > 0 ? sessionPermissionClient(session) : undefined;
      const { toolCall, options } = request;
      // Journaled while it waits: a server that stops before it is settled withdraws it at its next start (interrupted-turns.ts).
      this.#options.mark(session, { permissionAsked: { toolCall, options } });
      // The editor hosts only its owner's sessions: another person's requests are theirs to answer.
      const { outcome, by } = await this.#options.permissions.ask(agent.spec.name, request, client, signal, session.record.ownerId === OWNER.id, (outcome, settledBy, device) => {
        // As it is settled, so the mark comes before what the agent does next, and before the end of a turn cut off with it.
        // A device that answered is named in it, so a replay says "Allowed on Pixel 8" as the live views did.
        this.#options.mark(session, { permission: { toolCall, options, outcome, settledBy, ...(device === undefined ? {} : { device }) } });
      });
      this.#options.log(`permission for session ${session.id}: ${outcome.outcome === "selected" ? outcome.optionId : "cancelled"} (${by})`);
      return { outcome };
    }

    const editor = this.#options.editor();
    if (FS_METHODS.has(method) || TERMINAL_METHODS.has(method)) {
      // The editor serves its workspace to the person it belongs to (design: third wave, decision 1):
      // another person's session is served here, within that person's folders, editor or not.
      const served = FS_METHODS.has(method) ? editor?.host.fs : editor?.host.terminal;
      const inEditor = editor !== undefined && served === true && !session.ephemeral && session.record.ownerId === OWNER.id;
      if (inEditor) return editor.hostRequest(method, publicParams, signal);
      const roots = await this.#options.hostRoots(session);
      return this.#options.localHost.handle(method, publicParams, { sessionId: session.id, roots }, signal);
    }

    // Anything else (extension methods, elicitation) goes to the first client following the session.
    const client = session.clients.values().next().value;
    if (!client) throw new RpcFailure(ErrorCode.MethodNotFound, `${method}: no client follows session ${session.id}`);
    return client.forwardRequest(method, publicParams, session.id, signal);
  }

  notification(agent: AgentEntry, method: string, params: unknown): void {
    const session = this.#options.agents.sessionOf(agent, params);
    if (!session) {
      this.#options.log(`agent ${agent.spec.name}: ${method} for an unknown session, dropped`, "debug");
      return;
    }
    if (method === Acp.client.session.update) {
      if (session.suppressUpdates) return;
      const update = (params as { update: SessionUpdate }).update;
      if (session.ephemeral) {
        session.onUpdate?.(update);
        return;
      }
      if (session.naming) {
        session.naming.updates.push(update);
        return;
      }
      this.#options.record(session, update);
    }
    notifyClients(session, method, withSessionId(params, session.id));
  }

  async #oneShotPermission(agent: AgentEntry, session: HubSession, request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionOutcome> {
    const policy: OneShotPermissionPolicy = session.oneShotPermissions ?? "reject";
    // The server chose the editor for /v1's runs (ACP_REMOTE_V1_PERMISSIONS, or its default with an editor attached).
    if (policy === "editor" && this.#options.editor()) {
      return (await this.#options.permissions.ask(agent.spec.name, request, undefined, signal, true, undefined, session.oneShotRequestId)).outcome;
    }
    const kinds = policy === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
    const option = request.options.find((o) => kinds.includes(o.kind));
    return option ? { outcome: "selected", optionId: option.optionId } : CANCELLED;
  }
}
