// Session tab script: mounts the shared session view (dist/web/session-view.js,
// loaded as a file at run time) and translates between its calls and the
// panel's messages. The session id and the composer's draft live in the
// webview's state, which VS Code keeps across a window reload: the panel
// serializer reopens the session from it and the draft comes back. The
// session's name and why it takes no prompt (with the button that helps)
// outlive each fresh view the journal draws.
import {
  FromSessionTab,
  ToSessionTab,
  type SessionFromWebview,
  type SessionTabState,
  type SessionToWebview,
  type TabAction,
  type TabUnavailable,
} from "../webview-messages.ts";
import { el, vscodeApi } from "./lib/vscode-api.ts";
import type { SessionView, SessionViewHost, SessionViewModule, Unavailable } from "./lib/session-view-module.ts";

const vscode = vscodeApi<SessionFromWebview, SessionTabState>();
const root = document.getElementById("root")!;
const state: SessionTabState = vscode.getState() ?? { sessionId: root.dataset["sessionId"] ?? "", draft: "" };
vscode.setState(state);

const ACTION_LABELS: Record<TabAction, string> = { startServer: "Start Server", restartServer: "Restart Server" };
/** The session's name as the panel last said it; from the state after a reload, until it speaks. */
let name: string | undefined;
/** Why the session takes no prompt, as the panel last said it. */
let unavailable: TabUnavailable | null = null;

function unavailableOf(u: TabUnavailable | null): Unavailable | undefined {
  if (u === null) return undefined;
  const action = u.action;
  if (action === undefined) return { reason: u.reason };
  return { reason: u.reason, action: { label: ACTION_LABELS[action], run: () => vscode.postMessage({ type: FromSessionTab.unavailableAction, action }) } };
}

const host: SessionViewHost = {
  prompt: (text) => vscode.postMessage({ type: FromSessionTab.prompt, text }),
  cancel: () => vscode.postMessage({ type: FromSessionTab.cancel }),
  answerPermission: (requestId, optionId) => vscode.postMessage({ type: FromSessionTab.answerPermission, permissionId: String(requestId), optionId }),
  setMode: (modeId) => vscode.postMessage({ type: FromSessionTab.setMode, modeId }),
  setConfigOption: (configId, value) => vscode.postMessage({ type: FromSessionTab.setConfigOption, configId, value }),
  draftChanged: (draft) => {
    state.draft = draft;
    vscode.setState(state);
  },
  // The editor opens what a tool card names: a file at its line, a proposed change in the diff editor.
  openFile: (path, line) => vscode.postMessage({ type: FromSessionTab.openFile, path, ...(line === undefined ? {} : { line }) }),
  openDiff: (diff, requestId) => vscode.postMessage({ type: FromSessionTab.openDiff, diff, ...(requestId === undefined ? {} : { permissionId: String(requestId) }) }),
};

function mount(module: SessionViewModule): SessionView {
  const view = module.createSessionView(root, host);
  view.setDraft(state.draft);
  if (name !== undefined) view.setName(name);
  view.setUnavailable(unavailableOf(unavailable));
  return view;
}

interface Caret {
  start: number;
  end: number;
  direction: "forward" | "backward" | "none";
}

/** The composer's selection, if the composer has the focus. */
function composerCaret(): Caret | undefined {
  const active = document.activeElement;
  if (!(active instanceof HTMLTextAreaElement) || !root.contains(active)) return undefined;
  return { start: active.selectionStart, end: active.selectionEnd, direction: active.selectionDirection };
}

function restoreCaret(caret: Caret | undefined): void {
  const input = root.querySelector("textarea");
  if (caret === undefined || input === null) return;
  input.focus();
  input.setSelectionRange(caret.start, caret.end, caret.direction);
}

function apply(module: SessionViewModule, view: SessionView, m: SessionToWebview): SessionView {
  switch (m.type) {
    case ToSessionTab.opened: {
      // The journal is the whole truth: a fresh view, with the draft kept, and
      // the caret where it was when the person was typing (a server restart
      // redraws the view under their hands; the next key lands in the box).
      const caret = composerCaret();
      view.dispose();
      const fresh = mount(module);
      restoreCaret(caret);
      fresh.setConnection("connected");
      fresh.setModes(m.session.modes);
      fresh.setConfigOptions(m.session.configOptions);
      for (const n of m.session.updates) fresh.update(n);
      fresh.setBusy(m.session.running);
      return fresh;
    }
    case ToSessionTab.update:
      view.update(m.notification);
      break;
    case ToSessionTab.turnStarted:
      view.turnStarted();
      break;
    case ToSessionTab.turnEnded:
      if (m.stopReason === "error") view.turnFailed(m.message ?? "The turn failed.");
      else view.turnEnded(m.stopReason);
      break;
    case ToSessionTab.sessionState:
      view.setModes(m.modes);
      view.setConfigOptions(m.configOptions);
      break;
    case ToSessionTab.permissionRequested:
      view.permissionRequested(m.permissionId, m.request);
      break;
    case ToSessionTab.permissionSettled:
      view.permissionSettled(m.permissionId, m.how);
      break;
    case ToSessionTab.connection:
      view.setConnection(m.state);
      break;
    case ToSessionTab.error:
      view.error(m.message);
      break;
    case ToSessionTab.unavailable:
      unavailable = m.unavailable;
      view.setUnavailable(unavailableOf(unavailable));
      break;
    case ToSessionTab.named:
      name = m.name;
      view.setName(m.name);
      state.agent = m.agent;
      if (m.title === undefined) delete state.title;
      else state.title = m.title;
      vscode.setState(state);
      break;
    case ToSessionTab.promptRefused:
      // Nothing was sent: the text goes back in the box, unless the person has typed anew since.
      if (state.draft === "") view.setDraft(m.text);
      break;
  }
  return view;
}

async function main(): Promise<void> {
  const url = root.dataset["moduleSessionView"];
  if (!url) throw new Error("the page names no session view module");
  const module = (await import(url)) as SessionViewModule;
  let view = mount(module);
  view.setConnection("connecting");
  window.addEventListener("message", (event: MessageEvent<SessionToWebview>) => {
    view = apply(module, view, event.data);
  });
  vscode.postMessage({ type: FromSessionTab.ready });
}

main().catch((err: unknown) => {
  root.replaceChildren(el("p", { class: "muted" }, `The session view did not load: ${err instanceof Error ? err.message : String(err)}`));
});
