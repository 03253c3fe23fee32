// An agent's `session/request_permission` is offered at once to the remote
// client attached to the session and to the editor (as the policy allows). The
// first answer wins; the other side's prompt is withdrawn: the client gets ACP's
// `$/cancel_request` for the request id, the editor's request is cancelled.
// While nobody can be asked (a detached session, no editor), it waits, bounded,
// and is re-offered when a client loads the session or an editor attaches.
import type { PermissionOption, RequestPermissionOutcome, RequestPermissionRequest, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionInfo, PermissionPolicy } from "../../protocol/control.ts";
import { DEFAULT_PERMISSION_DETACHED_WAIT_MS } from "../limits.ts";
import type { EditorLink } from "./types.ts";

/** The side a permission request can be offered to. */
export interface PermissionClient {
  /** Sends the request to the session's clients (only to connection `to` when given); false when none took it. */
  offer(requestId: string, params: RequestPermissionRequest, to?: string): boolean;
  /** The request was settled: withdraws it (`$/cancel_request`) from every client but the one that answered. */
  withdraw(requestId: string, resolution: { outcome: RequestPermissionOutcome; answeredBy?: string }): void;
}

export type AnsweredBy = "client" | "editor" | "agent" | "timeout" | "cancel";

interface Pending {
  info: PermissionInfo;
  params: RequestPermissionRequest;
  resolve(outcome: RequestPermissionOutcome, by: AnsweredBy, connectionId?: string): void;
  /** The client the request was offered to, while it is offered. */
  client?: PermissionClient;
  editorAbort?: AbortController;
  timer?: NodeJS.Timeout;
}

export const CANCELLED: RequestPermissionOutcome = { outcome: "cancelled" };

export class PermissionBroker {
  readonly #pending = new Map<string, Pending>();
  readonly #waitMs: number;
  readonly #onChange: () => void;
  #policy: PermissionPolicy = "both";
  #editor: EditorLink | undefined;
  #next = 0;

  constructor(options: { waitMs?: number; onChange: () => void }) {
    this.#waitMs = options.waitMs ?? DEFAULT_PERMISSION_DETACHED_WAIT_MS;
    this.#onChange = options.onChange;
  }

  get policy(): PermissionPolicy {
    return this.#policy;
  }

  list(): PermissionInfo[] {
    return [...this.#pending.values()].map((p) => p.info);
  }

  setPolicy(policy: PermissionPolicy): void {
    this.#policy = policy;
  }

  setEditor(editor: EditorLink | undefined): void {
    this.#editor = editor;
    if (editor) for (const p of this.#pending.values()) if (!p.editorAbort) this.#offerEditor(p);
  }

  /**
   * Asks for a permission. `params.sessionId` is the public session id. Resolves
   * with the outcome to give the agent; never rejects.
   */
  ask(
    agent: string,
    params: RequestPermissionRequest,
    client: PermissionClient | undefined,
    signal: AbortSignal,
  ): Promise<{ outcome: RequestPermissionOutcome; by: AnsweredBy }> {
    const id = `permission-${++this.#next}`;
    return new Promise((resolve) => {
      const pending: Pending = {
        info: {
          permissionId: id,
          sessionId: params.sessionId,
          agent,
          toolCall: params.toolCall as ToolCallUpdate,
          options: params.options as PermissionOption[],
          createdAt: Date.now(),
        },
        params,
        resolve: (outcome, by, connectionId) => {
          if (!this.#pending.delete(id)) return;
          if (pending.timer) clearTimeout(pending.timer);
          // Withdraw the prompt of every side that did not answer.
          pending.client?.withdraw(id, by === "client" && connectionId !== undefined ? { outcome, answeredBy: connectionId } : { outcome });
          if (by !== "editor") pending.editorAbort?.abort();
          this.#onChange();
          resolve({ outcome, by });
        },
      };
      this.#pending.set(id, pending);
      signal.addEventListener("abort", () => pending.resolve(CANCELLED, "agent"), { once: true });
      if (client) this.#offerClient(id, pending, client);
      this.#offerEditor(pending);
      this.#armTimer(pending);
      this.#onChange();
    });
  }

  /** Client connection `connectionId` answered request `id` (a JSON-RPC response). Returns false if unknown. */
  answerFromClient(id: string, result: unknown, error: unknown, connectionId: string): boolean {
    const pending = this.#pending.get(id);
    if (!pending) return false;
    const outcome = error === undefined ? (validOutcome(result, pending.params) ?? CANCELLED) : CANCELLED;
    pending.resolve(outcome, "client", connectionId);
    return true;
  }

  /** The session's last client is gone (detached): its offers are void until a client follows the session again. */
  clientGone(sessionId: string): void {
    for (const p of this.#pending.values()) {
      if (p.params.sessionId === sessionId && p.client) {
        p.client = undefined;
        this.#armTimer(p);
      }
    }
  }

  /** Connection `connectionId` now follows the session: offer it what is still pending. */
  clientAttached(sessionId: string, client: PermissionClient, connectionId: string): void {
    for (const [id, p] of this.#pending) if (p.params.sessionId === sessionId) this.#offerClient(id, p, client, connectionId);
  }

  /** The turn was cancelled or the session ended: pending requests answer `cancelled`. */
  cancelSession(sessionId: string): void {
    for (const p of [...this.#pending.values()]) if (p.params.sessionId === sessionId) p.resolve(CANCELLED, "cancel");
  }

  #offerClient(id: string, pending: Pending, client: PermissionClient, to?: string): void {
    if (this.#policy === "editor" && this.#editor) return;
    if (client.offer(id, pending.params, to)) {
      pending.client = client;
      this.#disarmTimer(pending);
    }
  }

  #offerEditor(pending: Pending): void {
    const editor = this.#editor;
    if (!editor || (this.#policy === "client" && pending.client)) return;
    const abort = new AbortController();
    pending.editorAbort = abort;
    this.#disarmTimer(pending);
    editor.requestPermission(pending.info, abort.signal).then(
      (answer) => {
        if (!abort.signal.aborted) pending.resolve(validOutcome(answer, pending.params) ?? CANCELLED, "editor");
      },
      () => {
        // The editor failed or went away: the request waits for the client.
        if (pending.editorAbort === abort) pending.editorAbort = undefined;
        this.#armTimer(pending);
      },
    );
  }

  /** Starts the bounded wait when nobody holds the request. */
  #armTimer(pending: Pending): void {
    if (pending.client || pending.editorAbort || pending.timer) return;
    pending.timer = setTimeout(() => pending.resolve(CANCELLED, "timeout"), this.#waitMs);
    pending.timer.unref();
  }

  #disarmTimer(pending: Pending): void {
    if (pending.timer) clearTimeout(pending.timer);
    pending.timer = undefined;
  }
}

/** The outcome of a response, if it is one the agent offered. */
function validOutcome(result: unknown, params: RequestPermissionRequest): RequestPermissionOutcome | undefined {
  const outcome = (result as { outcome?: unknown } | null)?.outcome as { outcome?: unknown; optionId?: unknown } | undefined;
  if (outcome?.outcome === "cancelled") return CANCELLED;
  if (outcome?.outcome === "selected" && typeof outcome.optionId === "string") {
    const optionId = outcome.optionId;
    if (params.options.some((o) => o.optionId === optionId)) return { outcome: "selected", optionId };
  }
  return undefined;
}
