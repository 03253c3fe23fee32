// The context keys the `when` clauses of package.json read: which welcome
// content the Overview shows, which title actions it offers, and when a step
// of the walkthrough is done. Set from the server's state, its status and the
// permission requests, in one place.
import * as vscode from "vscode";
import type { StatusSnapshot } from "../../protocol/control.ts";
import type { Ctx } from "../ctx.ts";

const ContextKey = {
  /** The server's state: stopped, starting, running, restarting or failed. */
  serverState: "acpRemote.serverState",
  /** The running server has no agent configured: it runs the embedded demo agent. */
  demoOnly: "acpRemote.demoOnly",
  /** Permission requests that wait for an answer. */
  pendingPermissions: "acpRemote.pendingPermissions",
  /** The editor answered a permission request since the window opened. */
  permissionAnswered: "acpRemote.permissionAnswered",
  /** Sessions of the running server. */
  sessionCount: "acpRemote.sessionCount",
  /** Devices paired with the running server. */
  deviceCount: "acpRemote.deviceCount",
} as const;

export class ContextKeys implements vscode.Disposable {
  readonly #ctx: Ctx;
  readonly #subscriptions: vscode.Disposable[];
  /** Last value set per key: a status snapshot arrives with every change of a turn, a key is set only when it changes. */
  readonly #values = new Map<string, unknown>();

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
    this.#subscriptions = [
      ctx.onDidChangeState(() => this.#drawState()),
      ctx.onDidChangeStatus((status) => this.#drawStatus(status)),
      ctx.permissions.onDidChange(() => this.#drawPermissions()),
    ];
    this.#drawState();
    this.#drawStatus(ctx.status);
    this.#drawPermissions();
  }

  #set(key: string, value: unknown): void {
    if (this.#values.has(key) && this.#values.get(key) === value) return;
    this.#values.set(key, value);
    void vscode.commands.executeCommand("setContext", key, value);
  }

  #drawState(): void {
    const { state } = this.#ctx;
    this.#set(ContextKey.serverState, state);
    this.#set(ContextKey.demoOnly, state === "running" && this.#configuresNoAgent());
  }

  /** The sidecar runs its demo agent when none is configured. Read as the server starts: until a restart it runs what it started with. */
  #configuresNoAgent(): boolean {
    try {
      return this.#ctx.config.server().agents.length === 0;
    } catch {
      return false;
    }
  }

  #drawStatus(status: StatusSnapshot | undefined): void {
    this.#set(ContextKey.sessionCount, status?.sessions.length ?? 0);
    this.#set(ContextKey.deviceCount, status?.devices.length ?? 0);
  }

  #drawPermissions(): void {
    const { permissions } = this.#ctx;
    this.#set(ContextKey.pendingPermissions, permissions.pendingCount);
    // Once true it stays: the walkthrough's step is done, whatever is answered later.
    if (permissions.entries().some((e) => e.state === "answered")) this.#set(ContextKey.permissionAnswered, true);
  }

  dispose(): void {
    for (const s of this.#subscriptions) s.dispose();
  }
}
