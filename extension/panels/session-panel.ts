// Session tabs: one editor tab per session, drawn by the shared session view
// (web/session-view, loaded from dist/web/). A tab opens the session
// (acpRemote/session/open: journal and state), then follows it live: its
// session updates, turns (whoever prompted) and mode or config changes, and
// its permission requests inline. What the person does in the tab goes back
// as control requests. Tabs come back after a window reload through the
// panel serializer, from the state the webview keeps (session id, draft, the
// session's agent and title). Whenever the session cannot take a prompt (the
// server is down, the session was closed, its agent exited) the tab says why
// by the prompt box, with the button that helps; the draft stays.
import * as vscode from "vscode";
import { ControlRequest, type SessionInfo } from "../../protocol/control.ts";
import { sessionName, shortSessionId } from "../../protocol/names.ts";
import { Command, InternalCommand } from "../command-ids.ts";
import type { Ctx } from "../ctx.ts";
import type { DiffToOpen } from "../diff/diff-review.ts";
import { openFileAt } from "../diff/open-file.ts";
import {
  FromSessionTab,
  ToSessionTab,
  type SessionFromWebview,
  type SessionTabState,
  type SessionToWebview,
  type TabUnavailable,
} from "../webview-messages.ts";
import { TabPermissions } from "./tab-permissions.ts";
import { webviewHtml } from "./webview-html.ts";

const SESSION_VIEW_TYPE = "acpRemote.session";

/** The session view fills the tab; the composer stays at the bottom. */
const TAB_CSS = "html, body, #root { height: 100%; margin: 0; padding: 0; } body { overflow: hidden; }";

/** What names a session while the server cannot say (it is down): kept from the last status, the opened session or the tab's state. */
export interface KnownSession {
  agent?: string;
  title?: string;
}

/** The command each button by the reason runs. */
const ACTION_COMMANDS = { startServer: Command.start, restartServer: Command.restart } as const;

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
  #known: KnownSession;
  /** The session ended (closed here or elsewhere, or expired): it takes no more prompts. Ids are never reused. */
  #closed = false;
  /** The session was listed or opened in this run of the server: once it goes from the status, it ended. */
  #seen = false;
  /** Turns that began on the session: a failed prompt during which none began was refused. */
  #turnsStarted = 0;
  /** What the webview was last told of the name and the reason (each is told when it changes). */
  #toldName = "";
  #toldUnavailable = "";

  constructor(ctx: Ctx, panel: vscode.WebviewPanel, sessionId: string, known: KnownSession, onDispose: () => void) {
    this.#ctx = ctx;
    this.panel = panel;
    this.sessionId = sessionId;
    this.#known = known;
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
        if (e.sessionId === sessionId && e.state === "started") this.#turnsStarted++;
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
      ctx.onDidChangeStatus(() => this.#statusChanged()),
      // The server came back (a restart, a crash): the journal is the truth again.
      ctx.onDidChangeState((s) => {
        this.#tellUnavailable();
        void (s === "running" ? this.open() : this.#down());
      }),
    );
    panel.onDidDispose(() => {
      for (const s of this.#subscriptions) s.dispose();
      onDispose();
    });
  }

  #info(): SessionInfo | undefined {
    return this.#ctx.status?.sessions.find((s) => s.sessionId === this.sessionId);
  }

  /** The tab's title and the view's heading: the session's name (protocol/names.ts), kept while the server is down. */
  #title(): void {
    const info = this.#info();
    if (info) this.#known = { agent: info.agent, ...(info.title ? { title: info.title } : {}) };
    const { agent, title } = this.#known;
    if (agent === undefined) {
      this.panel.title = `Session ${shortSessionId(this.sessionId)}`;
      return;
    }
    const name = sessionName({ sessionId: this.sessionId, agent, title });
    this.panel.title = name;
    const told = JSON.stringify([name, agent, title]);
    if (!this.#ready || told === this.#toldName) return;
    this.#toldName = told;
    this.#post({ type: ToSessionTab.named, name, agent, ...(title === undefined ? {} : { title }) });
  }

  #statusChanged(): void {
    const status = this.#ctx.status;
    if (this.#ctx.isRunning && status) {
      if (status.sessions.some((s) => s.sessionId === this.sessionId)) this.#seen = true;
      else if (this.#seen) this.#closed = true;
    }
    this.#title();
    this.#tellUnavailable();
  }

  /** Why the session takes no prompt now, with the button that helps; null when it takes one. */
  #unavailable(): TabUnavailable | null {
    const ctx = this.#ctx;
    if (this.#closed) return { reason: "This session was closed: it takes no more prompts." };
    switch (ctx.state) {
      case "stopped":
        return { reason: "The ACP Remote server is stopped.", action: "startServer" };
      case "failed":
        return { reason: `The ACP Remote server did not start${ctx.lastError ? ` (${ctx.lastError})` : ""}.`, action: "startServer" };
      case "starting":
      case "restarting":
        return { reason: "The ACP Remote server is starting…" };
      case "running":
        break;
    }
    const name = this.#info()?.agent ?? this.#known.agent;
    const agent = ctx.status?.agents.find((a) => a.name === name);
    if (agent && (agent.state === "failed" || agent.state === "stopped")) {
      return { reason: `The agent ${agent.name} has exited${agent.lastError ? ` (${agent.lastError})` : ""}; restarting the server starts it again.`, action: "restartServer" };
    }
    return null;
  }

  #tellUnavailable(): void {
    const unavailable = this.#unavailable();
    const told = JSON.stringify(unavailable);
    if (!this.#ready || told === this.#toldUnavailable) return;
    this.#toldUnavailable = told;
    this.#post({ type: ToSessionTab.unavailable, unavailable });
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
      this.#seen = true;
      this.#known = { agent: session.agent, ...(session.title ? { title: session.title } : {}) };
      this.#post({ type: ToSessionTab.opened, session });
      this.#title();
      this.#tellUnavailable();
      this.#permissions.showPending();
    } catch (err) {
      if (generation !== this.#generation) return;
      // Gone from the server (closed, expired while the server was down): it says so by the box, the transcript stays.
      await this.#ctx.refreshStatus();
      if (generation !== this.#generation) return;
      if (this.#ctx.status && !this.#ctx.status.sessions.some((s) => s.sessionId === this.sessionId)) {
        this.#closed = true;
        this.#tellUnavailable();
        return;
      }
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
          // A new page (the tab was drawn anew, or the window reloaded): it is told everything again.
          this.#toldName = "";
          this.#toldUnavailable = "";
          this.#title();
          this.#tellUnavailable();
          await this.open();
          break;
        case FromSessionTab.prompt: {
          // Answered when the turn ends; the view shows the prompt when the journal's user_message_chunk comes back.
          const started = this.#turnsStarted;
          try {
            await this.#ctx.client().sendRequest(ControlRequest.prompt, { sessionId, prompt: [{ type: "text", text: m.text }] });
          } catch (err) {
            // Refused before any turn began (the server went down, the session ended): the text was not sent, so it goes back in the box.
            if (this.#turnsStarted === started) this.#post({ type: ToSessionTab.promptRefused, text: m.text });
            throw err;
          }
          break;
        }
        case FromSessionTab.unavailableAction:
          await vscode.commands.executeCommand(ACTION_COMMANDS[m.action]);
          break;
        case FromSessionTab.cancel:
          await this.#ctx.client().sendRequest(ControlRequest.cancelTurn, { sessionId });
          break;
        case FromSessionTab.answerPermission:
          this.#permissions.answer(m.permissionId, m.optionId);
          break;
        case FromSessionTab.openFile:
          await openFileAt(m.path, m.line, this.#info()?.cwd);
          break;
        case FromSessionTab.openDiff:
          await vscode.commands.executeCommand(InternalCommand.openDiff, { ...m.diff, ...(m.permissionId === undefined ? {} : { permissionId: m.permissionId }) } satisfies DiffToOpen);
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
  readonly #onDidChangeTabs = new vscode.EventEmitter<void>();
  /** A session tab opened or closed (the tree says which sessions this editor shows). */
  readonly onDidChangeTabs = this.#onDidChangeTabs.event;

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

  /** Whether the session has a tab in this editor (visible or not). */
  isOpen(sessionId: string): boolean {
    return this.#open.has(sessionId);
  }

  /** The session was closed from this editor: its tab goes with it (it would take no more prompts). */
  close(sessionId: string): void {
    this.#open.get(sessionId)?.dispose();
  }

  /** Whether the session's tab is open and visible (it shows the session's permission requests inline). */
  isVisible(sessionId: string): boolean {
    return this.#open.get(sessionId)?.panel.visible ?? false;
  }

  /** The session of the tab in front, if a session tab is. */
  activeSessionId(): string | undefined {
    return [...this.#open.values()].find((t) => t.panel.active)?.sessionId;
  }

  /** A tab from before a window reload: the webview's state names its session and its agent (the draft is the webview's own). */
  #restore(panel: vscode.WebviewPanel, state: unknown): void {
    const kept = state as Partial<SessionTabState> | undefined;
    const sessionId = kept?.sessionId;
    if (typeof sessionId !== "string" || sessionId === "" || this.#open.has(sessionId)) {
      panel.dispose();
      return;
    }
    const known: KnownSession = {
      ...(typeof kept?.agent === "string" ? { agent: kept.agent } : {}),
      ...(typeof kept?.title === "string" ? { title: kept.title } : {}),
    };
    this.#adopt(panel, sessionId, known);
  }

  #adopt(panel: vscode.WebviewPanel, sessionId: string, known: KnownSession = {}): void {
    this.#open.set(
      sessionId,
      new SessionTab(this.#ctx, panel, sessionId, known, () => {
        this.#open.delete(sessionId);
        this.#onDidChangeTabs.fire();
      }),
    );
    this.#onDidChangeTabs.fire();
  }

  dispose(): void {
    this.#serializer.dispose();
    for (const t of [...this.#open.values()]) t.dispose();
    this.#onDidChangeTabs.dispose();
  }
}
