// The permissions panel: every pending request with the tool call's details
// (title, kind, diff or command) and one button per option; settled requests
// stay visible, marked answered or withdrawn. One panel, revealed (without
// taking focus) when a request arrives that no visible session tab shows and
// no deferred completion's progress notification tells.
import * as vscode from "vscode";
import { InternalCommand } from "../command-ids.ts";
import type { Ctx } from "../ctx.ts";
import type { DiffToOpen } from "../diff/diff-review.ts";
import { ToolCallIndex } from "../permissions/tool-calls.ts";
import type { PermissionsFromWebview, PermissionsToWebview } from "../webview-messages.ts";
import { webviewHtml } from "./webview-html.ts";

const PERMISSIONS_VIEW_TYPE = "acpRemote.permissions";

/** A diff's file and its Open Diff button on one line. */
const PANEL_CSS = ".diff-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px; } .diff-head button { margin: 0; padding: 2px 8px; }";

export class PermissionPanel implements vscode.Disposable {
  #panel: vscode.WebviewPanel | undefined;
  readonly #ctx: Ctx;
  readonly #subscriptions: vscode.Disposable[] = [];
  readonly #toolCalls = new ToolCallIndex();

  /**
   * `shownInline` says whether a visible session tab already shows a session's
   * requests: the panel then stays where it is instead of opening beside it.
   */
  constructor(ctx: Ctx, shownInline: (sessionId: string) => boolean = () => false) {
    this.#ctx = ctx;
    this.#subscriptions.push(
      ctx.onSessionUpdate((n) => {
        this.#toolCalls.observe(n);
        // A pending request whose tool call just got more detail is drawn again.
        const u = n.update;
        if (
          (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") &&
          ctx.permissions.entries().some((e) => e.state === "pending" && e.info.toolCall.toolCallId === u.toolCallId)
        ) {
          this.#post();
        }
      }),
      ctx.permissions.onDidChange(() => this.#post()),
      ctx.permissions.onDidAsk((entry) => {
        // A deferred completion's request is told by its progress notification and the status item: the person opens the panel.
        if (!shownInline(entry.info.sessionId) && entry.info.requestId === undefined) this.show(true);
      }),
      ctx.onDidChangeState(() => this.#post()),
    );
  }

  show(preserveFocus = false): void {
    if (this.#panel) {
      this.#panel.reveal(undefined, preserveFocus);
      this.#post();
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      PERMISSIONS_VIEW_TYPE,
      "ACP Remote: Permissions",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(this.#ctx.extension.extensionUri, "dist", "webview")],
      },
    );
    this.#panel = panel;
    panel.webview.html = webviewHtml(panel.webview, this.#ctx.extension.extensionUri, "permissions", "Permissions", PANEL_CSS);
    panel.webview.onDidReceiveMessage((m: PermissionsFromWebview) => {
      if (m.type === "ready") this.#post();
      if (m.type === "answer" && !this.#ctx.permissions.answer(m.permissionId, m.optionId)) this.#post();
      if (m.type === "openDiff") void this.#openDiff(m.permissionId, m.path);
    });
    panel.onDidDispose(() => (this.#panel = undefined));
  }

  /** The request's proposed change to `path` (as the panel shows it) in the diff editor, with the request's answers while it waits. */
  async #openDiff(permissionId: string, path: string): Promise<void> {
    const entry = this.#ctx.permissions.entries().find((e) => e.info.permissionId === permissionId);
    if (!entry) return;
    const toolCall = this.#toolCalls.complete(entry.info.sessionId, entry.info.toolCall);
    const diff = toolCall.content?.find((c) => c.type === "diff" && c.path === path);
    if (diff?.type !== "diff") return;
    const open: DiffToOpen = { path, oldText: diff.oldText ?? null, newText: diff.newText, ...(entry.state === "pending" ? { permissionId } : {}) };
    await vscode.commands.executeCommand(InternalCommand.openDiff, open);
  }

  #post(): void {
    if (!this.#panel) return;
    const message: PermissionsToWebview = {
      type: "permissions",
      entries: this.#ctx.permissions.entries().map((e) => ({
        ...e,
        info: { ...e.info, toolCall: this.#toolCalls.complete(e.info.sessionId, e.info.toolCall) },
      })),
      serverRunning: this.#ctx.isRunning,
    };
    void this.#panel.webview.postMessage(message);
  }

  dispose(): void {
    this.#panel?.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
