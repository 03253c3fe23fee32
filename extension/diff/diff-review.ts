// Reviewing a proposed change in VS Code's diff editor before answering for
// it. Open Diff (a tool card or permission request in a session tab, a
// request in the permissions panel) shows the file's text before and after,
// read-only, titled "file.ts (proposed)". While the change belongs to a
// permission request that waits, the diff editor's title bar offers its
// answers: Allow, Reject, and every option the agent offered. They answer
// exactly that request, as the tab, the panel or the notification would; the
// first answer wins wherever it is given. Once the request is settled (here
// or elsewhere) the actions go.
import { basename } from "node:path";
import * as vscode from "vscode";
import type { PermissionOption } from "@agentclientprotocol/sdk";
import { Command, InternalCommand } from "../command-ids.ts";
import type { PermissionCenter, PermissionEntry } from "../permissions/permission-center.ts";
import { DIFF_SCHEME, DiffDocuments, type Review } from "./diff-documents.ts";

/** True while the diff editor in front shows a change whose permission request waits for an answer. */
const DIFF_ANSWERABLE_CONTEXT = "acpRemote.diffAnswerable";

/** What Open Diff sends: the change, and the permission request it belongs to (a request's id only while it waits). */
export type DiffToOpen = Review;

function isDiffToOpen(value: unknown): value is DiffToOpen {
  const v = value as Partial<DiffToOpen> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.path === "string" &&
    typeof v.newText === "string" &&
    (v.oldText === null || typeof v.oldText === "string") &&
    (v.permissionId === undefined || typeof v.permissionId === "string")
  );
}

/** The option of one of these kinds the agent offered first, if any. */
function optionOf(options: readonly PermissionOption[], kinds: readonly string[]): PermissionOption | undefined {
  for (const kind of kinds) {
    const option = options.find((o) => o.kind === kind);
    if (option) return option;
  }
  return undefined;
}

export class DiffReview implements vscode.Disposable {
  readonly #documents = new DiffDocuments();
  readonly #permissions: PermissionCenter;
  readonly #subscriptions: vscode.Disposable[] = [];
  #answerable: boolean | undefined;

  constructor(permissions: PermissionCenter) {
    this.#permissions = permissions;
    this.#subscriptions.push(
      vscode.commands.registerCommand(InternalCommand.openDiff, (diff: unknown) => this.open(diff)),
      vscode.commands.registerCommand(Command.diffAllow, (uri?: vscode.Uri) => this.#answerWith(uri, ["allow_once", "allow_always"])),
      vscode.commands.registerCommand(Command.diffReject, (uri?: vscode.Uri) => this.#answerWith(uri, ["reject_once", "reject_always"])),
      vscode.commands.registerCommand(Command.diffAnswer, (uri?: vscode.Uri) => this.#answerWith(uri, [])),
      // Which diff editor is in front, and whether its request still waits.
      vscode.window.tabGroups.onDidChangeTabs(() => this.#refresh()),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.#refresh()),
      vscode.window.onDidChangeActiveTextEditor(() => this.#refresh()),
      permissions.onDidChange(() => this.#refresh()),
    );
    this.#refresh();
  }

  /** Shows the change in the diff editor: the text before on the left, the proposed text on the right. */
  async open(diff: unknown): Promise<void> {
    if (!isDiffToOpen(diff)) throw new Error("ACP Remote: Open Diff needs a path, the old text (or null) and the new text");
    const { left, right } = this.#documents.add(diff);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${basename(diff.path)} (proposed)`, { preview: true });
    this.#refresh();
  }

  /** The pending request of a diff editor's change: the one the command names (the editor title passes its resource), else the one in front. */
  #pendingOf(uri: vscode.Uri | undefined): PermissionEntry | undefined {
    const target = uri instanceof vscode.Uri && uri.scheme === DIFF_SCHEME ? uri : this.#frontDiff();
    const permissionId = target === undefined ? undefined : this.#documents.reviewOf(target)?.permissionId;
    if (permissionId === undefined) return undefined;
    return this.#permissions.entries().find((e) => e.info.permissionId === permissionId && e.state === "pending");
  }

  /** The right side of the diff editor in front, when it shows a change of ours. */
  #frontDiff(): vscode.Uri | undefined {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputTextDiff && input.modified.scheme === DIFF_SCHEME ? input.modified : undefined;
  }

  /** Answers with the first option of these kinds the agent offered; with none (or no kinds given), the person picks among them all. */
  async #answerWith(uri: vscode.Uri | undefined, kinds: readonly string[]): Promise<void> {
    const entry = this.#pendingOf(uri);
    if (entry === undefined) {
      void vscode.window.showInformationMessage("ACP Remote: this change's permission request no longer waits for an answer.");
      this.#refresh();
      return;
    }
    let option = optionOf(entry.info.options, kinds);
    if (option === undefined) {
      const pick = await vscode.window.showQuickPick(
        entry.info.options.map((o) => ({ label: o.name, description: o.kind.replace(/_/g, " "), option: o })),
        { title: `ACP Remote: answer "${entry.info.toolCall.title ?? "the tool call"}"` },
      );
      option = pick?.option;
    }
    if (option === undefined) return;
    if (!this.#permissions.answer(entry.info.permissionId, option.optionId)) {
      void vscode.window.showInformationMessage("ACP Remote: the request was answered elsewhere first.");
    }
    this.#refresh();
  }

  #refresh(): void {
    const answerable = this.#pendingOf(undefined) !== undefined;
    if (answerable === this.#answerable) return;
    this.#answerable = answerable;
    void vscode.commands.executeCommand("setContext", DIFF_ANSWERABLE_CONTEXT, answerable);
  }

  dispose(): void {
    for (const s of this.#subscriptions) s.dispose();
    this.#documents.dispose();
  }
}
