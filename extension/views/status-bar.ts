// Status bar: the server's state and how many permission requests wait.
// Clicking opens the permissions panel when something waits, else the tree.
import * as vscode from "vscode";
import type { Ctx } from "../ctx.ts";

export class StatusBar implements vscode.Disposable {
  readonly #item = vscode.window.createStatusBarItem("acpRemote.status", vscode.StatusBarAlignment.Left, 50);
  readonly #ctx: Ctx;
  readonly #subscriptions: vscode.Disposable[];

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
    this.#item.name = "ACP Remote";
    this.#subscriptions = [ctx.onDidChangeState(() => this.#draw()), ctx.permissions.onDidChange(() => this.#draw())];
    this.#draw();
    this.#item.show();
  }

  #draw(): void {
    const { state } = this.#ctx;
    const pending = this.#ctx.permissions.pendingCount;
    const icon = state === "running" ? "$(radio-tower)" : state === "failed" ? "$(error)" : state === "stopped" ? "$(debug-stop)" : "$(loading~spin)";
    this.#item.text = `${icon} ACP ${state}${pending > 0 ? ` $(shield) ${pending}` : ""}`;
    this.#item.tooltip = `ACP Remote: ${state}${this.#ctx.server ? ` at ${this.#ctx.server.url}` : ""}${pending > 0 ? `\n${pending} permission request(s) waiting` : ""}${this.#ctx.lastError ? `\n${this.#ctx.lastError}` : ""}`;
    this.#item.command = pending > 0 ? "acpRemote.showPermissions" : "acpRemote.focusView";
    this.#item.backgroundColor = pending > 0 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.#item.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
