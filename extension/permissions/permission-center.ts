// Permission requests the sidecar offers the editor. Each one shows at once in
// a progress notification (with the options as links) and in the permissions
// panel, while the remote client sees the same request. The first answer wins:
// when the sidecar cancels the request (the client answered, or the turn
// ended) the notification closes and the panel marks the entry withdrawn.
// Who settled it, and how, the sidecar says just before it cancels
// (`acpRemote/permission/settled`): the entry keeps it, so the views say
// "Allowed on Pixel 8" rather than only that the request went.
//
// Why a progress notification: `showInformationMessage` cannot be closed by
// the extension, a progress notification closes when its task settles.
import * as vscode from "vscode";
import type { PermissionAnswer, PermissionInfo, PermissionSettledEvent } from "../../protocol/control.ts";
import type { PermissionResolution } from "../../protocol/permission-outcome.ts";
import { Command } from "../command-ids.ts";
import { DEFAULT_EDITOR_SETTLED_PERMISSIONS } from "../limits.ts";

export type PermissionEntryState = "pending" | "answered" | "withdrawn";

export interface PermissionEntry {
  info: PermissionInfo;
  state: PermissionEntryState;
  /** The option chosen in the editor, when it answered. */
  chosenOptionId?: string;
  /** How it was settled and by whom (the editor's own answer, or what the sidecar said), once settled. */
  resolution?: PermissionResolution;
}

interface Pending {
  entry: PermissionEntry;
  resolve(answer: PermissionAnswer): void;
}

export function permissionTitle(info: PermissionInfo): string {
  return info.toolCall.title ?? info.toolCall.kind ?? "a tool call";
}

export class PermissionCenter implements vscode.Disposable {
  readonly #pending = new Map<string, Pending>();
  /** Settled entries, newest first, bounded. */
  #settled: PermissionEntry[] = [];
  readonly #onDidChange = new vscode.EventEmitter<void>();
  readonly #onDidAsk = new vscode.EventEmitter<PermissionEntry>();
  readonly onDidChange = this.#onDidChange.event;
  /** A new request arrived (the panel opens on it). */
  readonly onDidAsk = this.#onDidAsk.event;

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Pending entries, oldest first, then settled ones, newest first. */
  entries(): PermissionEntry[] {
    return [...[...this.#pending.values()].map((p) => p.entry), ...this.#settled];
  }

  /** Serves `acpRemote/permission/request`: resolves with the editor's answer, or `cancelled` when withdrawn. */
  ask(info: PermissionInfo, token: vscode.CancellationToken): Promise<PermissionAnswer> {
    return new Promise<PermissionAnswer>((resolve) => {
      const entry: PermissionEntry = { info, state: "pending" };
      let settledResolve: () => void = () => undefined;
      const settledPromise = new Promise<void>((r) => (settledResolve = r));
      const pending: Pending = {
        entry,
        resolve: (answer) => {
          cancellation.dispose();
          settledResolve();
          resolve(answer);
        },
      };
      // The sidecar says who settled it (acpRemote/permission/settled) just before it cancels; vscode-jsonrpc
      // cancels at once but queues that notification: settling a moment later lets it tell the entry first.
      const cancellation = token.onCancellationRequested(() => setImmediate(() => this.#settle(info.permissionId, "withdrawn")));
      this.#pending.set(info.permissionId, pending);
      this.#onDidChange.fire();
      this.#onDidAsk.fire(entry);
      this.#notify(entry, settledPromise);
      if (token.isCancellationRequested) this.#settle(info.permissionId, "withdrawn");
    });
  }

  /** The person chose an option (panel button or notification link). False when it is no longer pending. */
  answer(permissionId: string, optionId: string): boolean {
    const pending = this.#pending.get(permissionId);
    if (!pending || !pending.entry.info.options.some((o) => o.optionId === optionId)) return false;
    pending.entry.chosenOptionId = optionId;
    pending.entry.resolution = { optionId, by: "editor" };
    this.#settle(permissionId, "answered", { outcome: { outcome: "selected", optionId } });
    return true;
  }

  /** The person stopped the turn in a session tab: its open request is answered as cancelled, as ACP asks. False when no longer pending. */
  decline(permissionId: string): boolean {
    const pending = this.#pending.get(permissionId);
    if (!pending) return false;
    // No option was chosen: the request is withdrawn, the turn being stopped.
    pending.entry.resolution = { by: "editor" };
    this.#settle(permissionId, "withdrawn");
    return true;
  }

  /**
   * The sidecar says how a request was settled and by whom. It says so just
   * before it withdraws the editor's prompt of it; told later (or of one the
   * editor answered), the entry is told anew.
   */
  resolved(event: PermissionSettledEvent): void {
    const entry = this.#pending.get(event.permissionId)?.entry ?? this.#settled.find((e) => e.info.permissionId === event.permissionId);
    if (!entry) return;
    // The editor's own answer is its own to tell (where in the editor, which option).
    if (entry.resolution?.by === "editor" && event.settledBy === "editor") return;
    entry.resolution = {
      ...(event.outcome.outcome === "selected" ? { optionId: event.outcome.optionId } : {}),
      by: event.settledBy,
      ...(event.device === undefined ? {} : { device: event.device }),
    };
    if (!this.#pending.has(event.permissionId)) this.#onDidChange.fire();
  }

  /** The sidecar went away: nothing pending can be answered any more. */
  withdrawAll(): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id, "withdrawn");
  }

  #settle(permissionId: string, state: "answered" | "withdrawn", answer: PermissionAnswer = { outcome: { outcome: "cancelled" } }): void {
    const pending = this.#pending.get(permissionId);
    if (!pending) return;
    this.#pending.delete(permissionId);
    pending.entry.state = state;
    this.#settled = [pending.entry, ...this.#settled].slice(0, DEFAULT_EDITOR_SETTLED_PERMISSIONS);
    pending.resolve(answer);
    this.#onDidChange.fire();
  }

  #notify(entry: PermissionEntry, settled: Promise<void>): void {
    const info = entry.info;
    const links = info.options
      .map((o) => `[${o.name}](command:${Command.answerPermission}?${encodeURIComponent(JSON.stringify([info.permissionId, o.optionId]))})`)
      .join(" · ");
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `ACP Remote: ${info.agent} asks to run "${permissionTitle(info)}"`,
        // Cancel only hides the notification; the request stays in the panel.
        cancellable: true,
      },
      (progress, hide) => {
        progress.report({ message: `${links} · [Details](command:${Command.showPermissions})` });
        return new Promise<void>((resolve) => {
          void settled.then(resolve);
          hide.onCancellationRequested(() => resolve());
        });
      },
    );
  }

  dispose(): void {
    this.withdrawAll();
    this.#onDidChange.dispose();
    this.#onDidAsk.dispose();
  }
}
