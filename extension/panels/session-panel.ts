// Session tabs: one editor tab per session, drawn by the shared session view
// (web/session-view, loaded from dist/web/). A tab opens the session
// (acpRemote/session/open: journal and state), then follows it live: its
// session updates, turns (whoever prompted) and mode or config changes, and
// its permission requests inline. What the person does in the tab goes back
// as control requests. Tabs come back after a window reload through the
// panel serializer, from the state the webview keeps (session id, draft).
import * as vscode from "vscode";
import { ControlRequest, type SessionInfo } from "../../protocol/control.ts";
import type { Ctx } from "../ctx.ts";
import { FromSessionTab, ToSessionTab, type SessionFromWebview, type SessionTabState, type SessionToWebview } from "../webview-messages.ts";
import { TabPermissions } from "./tab-permissions.ts";
import { webviewHtml } from "./webview-html.ts";

export const SESSION_VIEW_TYPE = "acpRemote.session";

/** The session view fills the tab; the composer stays at the bottom. */
const TAB_CSS = "html, body, #root { height: 100%; margin: 0; padding: 0; } body { overflow: hidden; }";

class SessionTab implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  readonly sessionId: string;
  readonly #ctx: Ctx;
  readonly #permissions: TabPermissions;
  readonly #subscriptions: vscode.Disposable[] = [];
  /** Live messages count only once the journal they follow is drawn (they are in it before). */
  #opened = false;
  /** Each open() supersedes the previous one (a restart while it was under way). */
  #generation = 0;
  #ready = false;
  /** The message of the last failed turn: its prompt request fails with it too, and it shows once. */
  #lastTurnError: string | undefined;

  constructor(ctx: Ctx, panel: vscode.WebviewPanel, sessionId: string, onDispose: () => void) {
    this.#ctx = ctx;
    this.panel = panel;
    this.sessionId = sessionId;
    const dist = vscode.Uri.joinPath(ctx.extension.extensionUri, "dist");
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(dist, "webview"), vscode.Uri.joinPath(dist, "web")] };
    panel.webview.html = webviewHtml(panel.webview, ctx.extension.extensionUri, "session", "Session", TAB_CSS, {
      styles: [vscode.Uri.joinPath(dist, "web", "session-view.css")],
      modules: { "session-view": vscode.Uri.joinPath(dist, "web", "session-view.js") },
      data: { "session-id": sessionId },
    });
    this.#permissions = new TabPermissions(ctx.permissions, sessionId, {
      requested: (permissionId, request) => this.#post({ type: ToSessionTab.permissionRequested, permissionId, request }),
      settled: (permissionId, how) => this.#post({ type: ToSessionTab.permissionSettled, permissionId, how }),
    });
    this.#title();
    this.#subscriptions.push(
      panel.webview.onDidReceiveMessage((m: SessionFromWebview) => void this.#onMessage(m)),
      ctx.onSessionUpdate((n) => {
        if (this.#opened && n.sessionId === sessionId) this.#post({ type: ToSessionTab.update, notification: n });
      }),
      ctx.onTurn((e) => {
        if (!this.#opened || e.sessionId !== sessionId) return;
        if (e.state === "started") {
          this.#lastTurnError = undefined;
          this.#post({ type: ToSessionTab.turnStarted });
          return;
        }
        if (e.stopReason === "error") this.#lastTurnError = e.message;
        this.#post({ type: ToSessionTab.turnEnded, stopReason: e.stopReason ?? "end_turn", ...(e.message ? { message: e.message } : {}) });
      }),
      ctx.onSessionState((e) => {
        if (this.#opened && e.sessionId === sessionId) this.#post({ type: ToSessionTab.sessionState, modes: e.modes, configOptions: e.configOptions });
      }),
      ctx.permissions.onDidAsk((entry) => this.#opened && this.#permissions.asked(entry)),
      ctx.permissions.onDidChange(() => this.#permissions.changed()),
      ctx.onDidChangeStatus(() => this.#title()),
      // The server came back (a restart, a crash): the journal is the truth again.
      ctx.onDidChangeState((s) => void (s === "running" ? this.open() : this.#down())),
    );
    panel.onDidDispose(() => {
      for (const s of this.#subscriptions) s.dispose();
      onDispose();
    });
  }

  #info(): SessionInfo | undefined {
    return this.#ctx.status?.sessions.find((s) => s.sessionId === this.sessionId);
  }

  #title(): void {
    const info = this.#info();
    // Ids start with the agent's name; their end tells sessions apart.
    const short = this.sessionId.slice(-6);
    this.panel.title = info ? (info.title ? `${info.title} · ${info.agent}` : `${info.agent} · ${short}`) : `Session ${short}`;
  }

  #post(message: SessionToWebview): void {
    if (this.#ready) void this.panel.webview.postMessage(message);
  }

  #down(): void {
    this.#opened = false;
    this.#generation++;
    this.#post({ type: ToSessionTab.connection, state: this.#ctx.state === "stopped" || this.#ctx.state === "failed" ? "disconnected" : "connecting" });
  }

  /** Draws the session anew from its journal and state. */
  async open(): Promise<void> {
    if (!this.#ready) return;
    if (!this.#ctx.isRunning) return this.#down();
    const generation = ++this.#generation;
    this.#opened = false;
    try {
      const session = await this.#ctx.client().sendRequest(ControlRequest.openSession, { sessionId: this.sessionId });
      if (generation !== this.#generation) return;
      this.#opened = true;
      this.#post({ type: ToSessionTab.opened, session });
      this.#permissions.showPending();
    } catch (err) {
      if (generation !== this.#generation) return;
      this.#post({ type: ToSessionTab.connection, state: "disconnected" });
      this.#post({ type: ToSessionTab.error, message: `The session did not open: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  async #onMessage(m: SessionFromWebview): Promise<void> {
    const sessionId = this.sessionId;
    try {
      switch (m.type) {
        case FromSessionTab.ready:
          this.#ready = true;
          await this.open();
          break;
        case FromSessionTab.prompt:
          // Answered when the turn ends; the view shows the prompt when the journal's user_message_chunk comes back.
          await this.#ctx.client().sendRequest(ControlRequest.prompt, { sessionId, prompt: [{ type: "text", text: m.text }] });
          break;
        case FromSessionTab.cancel:
          await this.#ctx.client().sendRequest(ControlRequest.cancelTurn, { sessionId });
          break;
        case FromSessionTab.answerPermission:
          this.#permissions.answer(m.permissionId, m.optionId);
          break;
        case FromSessionTab.setMode:
          await this.#ctx.client().sendRequest(ControlRequest.setMode, { sessionId, modeId: m.modeId });
          break;
        case FromSessionTab.setConfigOption: {
          const state = await this.#ctx.client().sendRequest(ControlRequest.setConfigOption, { sessionId, configId: m.configId, value: m.value });
          this.#post({ type: ToSessionTab.sessionState, modes: state.modes, configOptions: state.configOptions });
          break;
        }
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (message !== this.#lastTurnError) this.#post({ type: ToSessionTab.error, message });
    }
  }

  dispose(): void {
    this.panel.dispose();
  }
}

export class SessionPanels implements vscode.Disposable {
  readonly #ctx: Ctx;
  readonly #open = new Map<string, SessionTab>();
  readonly #serializer: vscode.Disposable;

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
    this.#serializer = vscode.window.registerWebviewPanelSerializer(SESSION_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state: unknown) => this.#restore(panel, state),
    });
  }

  /** Opens the session in its tab, or reveals the tab it has. */
  show(sessionId: string): void {
    const existing = this.#open.get(sessionId);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(SESSION_VIEW_TYPE, "Session", vscode.ViewColumn.Active, {
      enableScripts: true,
      // A hidden tab keeps its transcript and scroll position instead of drawing the journal again.
      retainContextWhenHidden: true,
    });
    this.#adopt(panel, sessionId);
  }

  /** Whether the session's tab is open and visible (it shows the session's permission requests inline). */
  isVisible(sessionId: string): boolean {
    return this.#open.get(sessionId)?.panel.visible ?? false;
  }

  /** The session of the tab in front, if a session tab is. */
  activeSessionId(): string | undefined {
    return [...this.#open.values()].find((t) => t.panel.active)?.sessionId;
  }

  /** A tab from before a window reload: the webview's state names its session (the draft is the webview's own). */
  #restore(panel: vscode.WebviewPanel, state: unknown): void {
    const sessionId = (state as Partial<SessionTabState> | undefined)?.sessionId;
    if (typeof sessionId !== "string" || sessionId === "" || this.#open.has(sessionId)) {
      panel.dispose();
      return;
    }
    this.#adopt(panel, sessionId);
  }

  #adopt(panel: vscode.WebviewPanel, sessionId: string): void {
    this.#open.set(sessionId, new SessionTab(this.#ctx, panel, sessionId, () => this.#open.delete(sessionId)));
  }

  dispose(): void {
    this.#serializer.dispose();
    for (const t of [...this.#open.values()]) t.dispose();
  }
}
