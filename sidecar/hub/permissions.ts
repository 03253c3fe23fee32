// An agent's `session/request_permission` is offered at once to the remote
// client attached to the session and to the editor (as the policy allows). The
// first answer wins; the other side's prompt is withdrawn: the client gets ACP's
// `$/cancel_request` for the request id, the editor's request is cancelled.
// While nobody can be asked (a detached session, no editor), it waits, bounded,
// and is re-offered when a client loads the session or an editor attaches.
// An answer counts only from a connection the request was offered to that
// still follows the session (and so is of the session's person), and request
// ids are random: a client cannot answer a request it was never asked. The
// editor is asked only for its owner's sessions (and for /v1's one-shot runs
// when the server says so).
import { randomUUID } from "node:crypto";
import type { PermissionOption, RequestPermissionOutcome, RequestPermissionRequest, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionInfo, PermissionPolicy } from "../../protocol/control.ts";
import type { PermissionSettledBy } from "../../protocol/history.ts";
import { AgentGone } from "../bridge/agent-gone.ts";
import { DEFAULT_PERMISSION_DETACHED_WAIT_MS } from "../limits.ts";
import type { EditorLink } from "./types.ts";

/** The side a permission request can be offered to. */
export interface PermissionClient {
  /** Sends the request to the session's clients (only to connection `to` when given); the connections that took it. */
  offer(requestId: string, params: RequestPermissionRequest, to?: string): string[];
  /** Does connection `connectionId` follow the session now? */
  follows(connectionId: string): boolean;
  /** The request was settled: withdraws it (`$/cancel_request`) from every client but the one that answered. */
  withdraw(requestId: string, resolution: PermissionSettlement & { answeredBy?: string }): void;
  /** The paired device whose token connection `connectionId` uses, if any. */
  deviceOf?(connectionId: string): string | undefined;
}

export type AnsweredBy = PermissionSettledBy;

/** How a request was settled: the outcome, who settled it, and the paired device's name when a device's connection answered. */
export interface PermissionSettlement {
  outcome: RequestPermissionOutcome;
  by: AnsweredBy;
  device?: string;
}

interface Pending {
  info: PermissionInfo;
  params: RequestPermissionRequest;
  resolve(outcome: RequestPermissionOutcome, by: AnsweredBy, connectionId?: string): void;
  /** The client the request was offered to, while it is offered. */
  client?: PermissionClient;
  /** The connections it was offered to: only they may answer it, while they follow the session. */
  readonly offeredTo: Set<string>;
  /** May the editor be asked (the editor hosts only its owner's sessions)? */
  readonly editor: boolean;
  editorAbort?: AbortController;
  timer?: NodeJS.Timeout;
}

export const CANCELLED: RequestPermissionOutcome = { outcome: "cancelled" };

export class PermissionBroker {
  readonly #pending = new Map<string, Pending>();
  readonly #waitMs: number;
  /** A request of session `sessionId` (its public id) opened or was settled. */
  readonly #onChange: (sessionId: string) => void;
  #policy: PermissionPolicy = "both";
  #editor: EditorLink | undefined;

  /** A request opened, or was settled (however): what notifications of it hear (sidecar/notify/). */
  readonly #onOpened: (info: PermissionInfo) => void;
  readonly #onSettled: (info: PermissionInfo, settlement: PermissionSettlement) => void;
  /** The name a paired device was given, by its id (who answered is told by it). */
  readonly #deviceLabel: (deviceId: string) => string | undefined;

  constructor(options: {
    waitMs?: number;
    onChange: (sessionId: string) => void;
    onOpened?: (info: PermissionInfo) => void;
    onSettled?: (info: PermissionInfo, settlement: PermissionSettlement) => void;
    deviceLabel?: (deviceId: string) => string | undefined;
  }) {
    this.#waitMs = options.waitMs ?? DEFAULT_PERMISSION_DETACHED_WAIT_MS;
    this.#onChange = options.onChange;
    this.#onOpened = options.onOpened ?? (() => undefined);
    this.#onSettled = options.onSettled ?? (() => undefined);
    this.#deviceLabel = options.deviceLabel ?? (() => undefined);
  }

  get policy(): PermissionPolicy {
    return this.#policy;
  }

  list(): PermissionInfo[] {
    return [...this.#pending.values()].map((p) => p.info);
  }

  /** How many requests of session `sessionId` are open now. */
  waiting(sessionId: string): number {
    let open = 0;
    for (const p of this.#pending.values()) if (p.params.sessionId === sessionId) open++;
    return open;
  }

  setPolicy(policy: PermissionPolicy): void {
    this.#policy = policy;
  }

  setEditor(editor: EditorLink | undefined): void {
    this.#editor = editor;
    if (editor) for (const p of this.#pending.values()) if (!p.editorAbort) this.#offerEditor(p);
  }

  /**
   * Asks for a permission. `params.sessionId` is the public session id;
   * `editor` says whether the editor may be asked. Resolves with the outcome
   * to give the agent; never rejects. `settled` hears it at once, in the same
   * step as the request is withdrawn from the others (a journal's mark of it
   * then comes before anything that follows from it, such as the end of a
   * turn whose agent died). An aborted `signal` withdraws the request: the
   * agent gave up on it, or its process died (`interrupted`). `requestId`
   * names the deferred completion whose run asks (the editor shows the
   * request with the job).
   */
  ask(
    agent: string,
    params: RequestPermissionRequest,
    client: PermissionClient | undefined,
    signal: AbortSignal,
    editor: boolean,
    settled?: (outcome: RequestPermissionOutcome, by: AnsweredBy, device?: string) => void,
    requestId?: string,
  ): Promise<{ outcome: RequestPermissionOutcome; by: AnsweredBy }> {
    const id = `permission-${randomUUID()}`;
    return new Promise((resolve) => {
      const pending: Pending = {
        offeredTo: new Set(),
        editor,
        info: {
          permissionId: id,
          sessionId: params.sessionId,
          agent,
          toolCall: params.toolCall as ToolCallUpdate,
          options: params.options as PermissionOption[],
          createdAt: Date.now(),
          ...(requestId === undefined ? {} : { requestId }),
        },
        params,
        resolve: (outcome, by, connectionId) => {
          if (!this.#pending.delete(id)) return;
          if (pending.timer) clearTimeout(pending.timer);
          const deviceId = by === "client" && connectionId !== undefined ? pending.client?.deviceOf?.(connectionId) : undefined;
          const device = deviceId === undefined ? undefined : this.#deviceLabel(deviceId);
          const settlement: PermissionSettlement = { outcome, by, ...(device === undefined ? {} : { device }) };
          // Told first: the editor hears who settled it (acpRemote/permission/settled) before its own prompt is withdrawn.
          this.#onSettled(pending.info, settlement);
          // Withdraw the prompt of every side that did not answer.
          pending.client?.withdraw(id, by === "client" && connectionId !== undefined ? { ...settlement, answeredBy: connectionId } : settlement);
          if (by !== "editor") pending.editorAbort?.abort();
          this.#onChange(params.sessionId);
          settled?.(outcome, by, device);
          resolve({ outcome, by });
        },
      };
      this.#pending.set(id, pending);
      signal.addEventListener("abort", () => pending.resolve(CANCELLED, signal.reason instanceof AgentGone ? "interrupted" : "agent"), { once: true });
      if (client) this.#offerClient(id, pending, client);
      this.#offerEditor(pending);
      this.#armTimer(pending);
      this.#onChange(params.sessionId);
      // Last: a notification's answer may settle it at once.
      if (this.#pending.has(id)) this.#onOpened(pending.info);
    });
  }

  /**
   * Client connection `connectionId` answered request `id` (a JSON-RPC
   * response). False, and nothing settled, unless the request is pending and
   * was offered to that connection, which still follows the session.
   */
  answerFromClient(id: string, result: unknown, error: unknown, connectionId: string): boolean {
    const pending = this.#pending.get(id);
    if (!pending || !pending.offeredTo.has(connectionId) || !pending.client?.follows(connectionId)) return false;
    const outcome = error === undefined ? (validOutcome(result, pending.params) ?? CANCELLED) : CANCELLED;
    pending.resolve(outcome, "client", connectionId);
    return true;
  }

  /**
   * An answer from a notification of the session's person (a paired
   * device's Web Push message or the ntfy topic), through its one-use
   * capability: option `optionId`, which must be one the agent offered. It
   * settles through the same first-answer-wins resolve as a client's or the
   * editor's answer. False, and nothing settled, when the request is no
   * longer pending (answered, withdrawn) or only the editor answers it.
   */
  answerFromNotification(id: string, optionId: string): boolean {
    const pending = this.#pending.get(id);
    if (!pending || !this.notifies(id)) return false;
    const outcome = validOutcome({ outcome: { outcome: "selected", optionId } }, pending.params);
    if (outcome === undefined) return false;
    pending.resolve(outcome, "notification");
    return true;
  }

  /** May request `id` be answered away from the page (a notification)? Not once settled, nor while the policy leaves it to the editor. */
  notifies(id: string): boolean {
    const pending = this.#pending.get(id);
    return pending !== undefined && !(this.#policy === "editor" && this.#editor !== undefined && pending.editor);
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
    if (this.#policy === "editor" && this.#editor && pending.editor) return;
    const offeredTo = client.offer(id, pending.params, to);
    if (offeredTo.length > 0) {
      for (const connectionId of offeredTo) pending.offeredTo.add(connectionId);
      pending.client = client;
      this.#disarmTimer(pending);
    }
  }

  #offerEditor(pending: Pending): void {
    const editor = this.#editor;
    if (!editor || !pending.editor || (this.#policy === "client" && pending.client)) return;
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
