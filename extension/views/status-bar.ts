// Status bar: the server's state, as an icon that reads as one, and how many
// permission requests wait. Clicking opens its menu (status-menu.ts).
import * as vscode from "vscode";
import { Command } from "../command-ids.ts";
import type { Ctx, ServerState } from "../ctx.ts";
import { describeServer } from "./status-menu.ts";

/** The item's icon per state: none of them a button's (a stop square read as "press to stop"). */
const STATE_ICON: Record<ServerState, string> = {
  stopped: "circle-slash",
  starting: "sync~spin",
  restarting: "sync~spin",
  running: "radio-tower",
  failed: "error",
};

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
    const waiting = pending > 0 ? `${pending} permission ${pending === 1 ? "request" : "requests"} waiting` : "";
    this.#item.text = `$(${STATE_ICON[state]}) ACP${pending > 0 ? ` $(shield) ${pending}` : ""}`;
    this.#item.tooltip = `ACP Remote: ${describeServer(this.#ctx)}${waiting ? `\n${waiting}` : ""}\nClick for the server's actions.`;
    this.#item.accessibilityInformation = { label: `ACP Remote: ${state}${waiting ? `, ${waiting}` : ""}`, role: "button" };
    this.#item.command = Command.showStatusMenu;
    this.#item.backgroundColor = pending > 0 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.#item.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
