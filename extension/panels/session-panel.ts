// A session's transcript, live: the journal first (acpRemote/session/transcript),
// then every acpRemote/session/update of that session. Buttons cancel the
// running turn and close the session. One panel per session.
import * as vscode from "vscode";
import { ControlRequest } from "../../protocol/control.ts";
import type { Ctx } from "../ctx.ts";
import type { SessionFromWebview, SessionToWebview } from "../webview-messages.ts";
import { webviewHtml } from "./webview-html.ts";

export const SESSION_VIEW_TYPE = "acpRemote.session";

class SessionPanel implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  readonly #ctx: Ctx;
  readonly #sessionId: string;
  readonly #subscriptions: vscode.Disposable[] = [];

  constructor(ctx: Ctx, sessionId: string, onDispose: () => void) {
    this.#ctx = ctx;
    this.#sessionId = sessionId;
    this.panel = vscode.window.createWebviewPanel(SESSION_VIEW_TYPE, `Session ${sessionId.slice(0, 12)}`, vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(ctx.extension.extensionUri, "dist", "webview")],
    });
    this.panel.webview.html = webviewHtml(this.panel.webview, ctx.extension.extensionUri, "session", "Session");
    this.panel.webview.onDidReceiveMessage((m: SessionFromWebview) => void this.#onMessage(m));
    this.#subscriptions.push(
      ctx.onSessionUpdate((n) => {
        if (n.sessionId === this.#sessionId) this.#post({ type: "update", notification: n });
      }),
      ctx.onDidChangeStatus(() => this.#post({ type: "info", session: this.#info() })),
      // The sidecar came back (after a crash or a restart): the journal is the truth again.
      ctx.onDidChangeState((s) => {
        if (s === "running") void this.reset();
      }),
    );
    this.panel.onDidDispose(() => {
      for (const s of this.#subscriptions) s.dispose();
      onDispose();
    });
  }

  #info() {
    return this.#ctx.status?.sessions.find((s) => s.sessionId === this.#sessionId);
  }

  #post(message: SessionToWebview): void {
    void this.panel.webview.postMessage(message);
  }

  async reset(): Promise<void> {
    try {
      const transcript = await this.#ctx.transcript(this.#sessionId);
      this.#post({ type: "reset", sessionId: this.#sessionId, session: this.#info(), updates: transcript.updates });
    } catch (err) {
      this.#post({
        type: "reset",
        sessionId: this.#sessionId,
        session: this.#info(),
        updates: [],
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  async #onMessage(m: SessionFromWebview): Promise<void> {
    try {
      if (m.type === "ready") await this.reset();
      if (m.type === "cancelTurn") await this.#ctx.client().sendRequest(ControlRequest.cancelTurn, { sessionId: this.#sessionId });
      if (m.type === "closeSession") {
        const close = "Close Session";
        const choice = await vscode.window.showWarningMessage(
          `Close session ${this.#sessionId}? Its client loses it and it cannot be resumed.`,
          { modal: true },
          close,
        );
        if (choice === close) await this.#ctx.client().sendRequest(ControlRequest.closeSession, { sessionId: this.#sessionId });
      }
    } catch (err) {
      void vscode.window.showErrorMessage(`ACP Remote: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  dispose(): void {
    this.panel.dispose();
  }
}

export class SessionPanels implements vscode.Disposable {
  readonly #ctx: Ctx;
  readonly #open = new Map<string, SessionPanel>();

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
  }

  show(sessionId: string): void {
    const existing = this.#open.get(sessionId);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    this.#open.set(sessionId, new SessionPanel(this.#ctx, sessionId, () => this.#open.delete(sessionId)));
  }

  dispose(): void {
    for (const p of [...this.#open.values()]) p.dispose();
  }
}
