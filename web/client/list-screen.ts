// The person's sessions across the configured agents (a connection lists the
// sessions of its own agent): those waiting for an answer first, then newest
// first, each with its title, folder, agent, last activity and what it is
// doing; and the form that starts a new one: an agent and a folder (the
// agent's default folder to start with).
import type { SessionInfo } from "@agentclientprotocol/sdk";
import type { ListedSessionState } from "../../protocol/acp.ts";
import { sessionName } from "../../protocol/names.ts";
import { AcpClient, listedState } from "./acp-client.ts";
import { sessionKey, setWaitingSessions, showList } from "./attention.ts";
import type { AgentList } from "./agents.ts";
import { h } from "./dom.ts";
import { openNotifyControl } from "./notify-control.ts";
import type { Endpoint } from "./endpoint.ts";
import { describe, type Screen } from "./screen.ts";
import { UnauthorizedError } from "./transport.ts";
import { SessionState } from "./wire.ts";

export interface ListScreenOptions {
  root: HTMLElement;
  endpoint: Omit<Endpoint, "agent">;
  agents: AgentList;
  onOpen(agent: string, sessionId: string): void;
  onNew(agent: string, cwd: string): void;
  onUnauthorized(): void;
  onForget(): void;
  /** The service worker's registration, for the notify control; undefined where there is none. */
  serviceWorker: Promise<ServiceWorkerRegistration | undefined>;
}

interface Listed extends SessionInfo {
  agent: string;
  state: ListedSessionState | undefined;
}

/** The mark of each state a session shows in the list; idle, the quietest. */
const BADGES: Record<ListedSessionState, { className: string; label: string; hint: string }> = {
  [SessionState.RequiresAction]: { className: "wc-waiting", label: "waiting for you", hint: "The agent waits for your answer to a permission request" },
  [SessionState.Running]: { className: "wc-running", label: "running", hint: "A turn is running" },
  [SessionState.Idle]: { className: "wc-idle", label: "idle", hint: "No turn is running" },
  [SessionState.Failed]: { className: "wc-failed", label: "failed", hint: "The last turn ended in an error" },
};

export function openListScreen(options: ListScreenOptions): Screen {
  let disposed = false;
  /** Counts the loads, so that an older one that answers late does not overwrite a newer one. */
  let loads = 0;
  showList();
  const list = h("ul", { class: "wc-sessions", "aria-label": "Sessions", "aria-busy": "true" });
  const status = h("p", { class: "wc-status", role: "status" }, "Loading sessions…");

  const agentSelect = h("select", { id: "wc-agent", name: "agent" });
  for (const agent of options.agents) agentSelect.append(h("option", { value: agent.name, selected: agent.isDefault }, agent.name));
  const cwd = h("input", { id: "wc-cwd", name: "cwd", type: "text", autocomplete: "off", autocapitalize: "off", spellcheck: "false" });
  const defaultCwd = (): string => options.agents.find((a) => a.name === agentSelect.value)?.cwd ?? "";
  cwd.value = defaultCwd();
  // Another agent brings its own default folder, unless the person typed one.
  let typed = false;
  cwd.addEventListener("input", () => (typed = cwd.value !== ""));
  agentSelect.addEventListener("change", () => {
    if (!typed) cwd.value = defaultCwd();
  });
  const form = h(
    "form",
    { class: "wc-new", "aria-label": "New session" },
    h("h2", {}, "New session"),
    h("label", { for: "wc-agent" }, "Agent"),
    agentSelect,
    h("label", { for: "wc-cwd" }, "Folder"),
    cwd,
    h("button", { type: "submit", class: "wc-primary" }, "Start session"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    options.onNew(agentSelect.value, cwd.value.trim() || defaultCwd());
  });

  const forget = h("button", { type: "button", class: "wc-link-button" }, "Unpair this browser");
  forget.addEventListener("click", () => options.onForget());
  const refresh = h("button", { type: "button", class: "wc-link-button" }, "Refresh");
  refresh.addEventListener("click", () => void load());

  const notify = openNotifyControl({ endpoint: options.endpoint, agents: options.agents.map((a) => a.name), serviceWorker: options.serviceWorker });
  options.root.replaceChildren(
    h(
      "main",
      { class: "wc-list" },
      h("header", { class: "wc-top" }, h("h1", {}, "ACP Remote"), refresh),
      notify.element,
      form,
      h("h2", {}, "Sessions"),
      status,
      list,
      h("footer", { class: "wc-foot" }, forget),
    ),
  );

  async function listAgent(agent: string): Promise<Listed[]> {
    const client = await AcpClient.connect({ ...options.endpoint, agent }, { onUpdate() {}, onPermission() {}, onPermissionWithdrawn() {}, onState() {}, onEnd() {} });
    try {
      return (await client.listSessions()).map((s) => ({ ...s, agent, state: listedState(s) }));
    } finally {
      client.close();
    }
  }

  async function load(): Promise<void> {
    list.setAttribute("aria-busy", "true");
    status.textContent = "Loading sessions…";
    // Each agent answers for itself: one that cannot start hides no other's sessions.
    const load = ++loads;
    const results = await Promise.allSettled(options.agents.map((a) => listAgent(a.name)));
    if (disposed || load !== loads) return;
    if (results.some((r) => r.status === "rejected" && r.reason instanceof UnauthorizedError)) return options.onUnauthorized();
    const sessions = results.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
    const failures = results.flatMap((r, i) => (r.status === "rejected" ? [`${options.agents[i]!.name}: ${describe(r.reason)}`] : []));
    // What waits for the person comes first: that is what they open the page for.
    const waits = (s: Listed): number => (s.state === SessionState.RequiresAction ? 0 : 1);
    sessions.sort((a, b) => waits(a) - waits(b) || (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""));
    list.replaceChildren(...sessions.map(item));
    const waiting = sessions.filter((s) => waits(s) === 0);
    setWaitingSessions(waiting.map((s) => ({ key: sessionKey(s.agent, s.sessionId), title: sessionName(s) })));
    const failed = failures.length === 0 ? "" : `Could not load the sessions of ${failures.join("; ")}`;
    status.textContent = failed !== "" ? failed : sessions.length === 0 ? "No sessions yet." : waitingText(waiting.length);
    status.classList.toggle("wc-error", failed !== "");
    list.setAttribute("aria-busy", "false");
  }

  function item(session: Listed): HTMLElement {
    const badge = session.state === undefined ? undefined : BADGES[session.state];
    const button = h(
      "button",
      { type: "button", class: "wc-item", "data-session-id": session.sessionId, "data-state": session.state ?? "" },
      h("span", { class: "wc-item-title" }, sessionName(session), badge ? h("span", { class: `wc-badge ${badge.className}`, title: badge.hint }, badge.label) : null),
      h("span", { class: "wc-item-meta wc-item-cwd" }, session.cwd),
      h("span", { class: "wc-item-meta" }, [session.agent, updated(session.updatedAt)].filter(Boolean).join(" · ")),
    );
    button.addEventListener("click", () => options.onOpen(session.agent, session.sessionId));
    return h("li", {}, button);
  }

  // Back on the page (the phone woke, the tab came to the front): what waits may have changed meanwhile.
  const onVisible = (): void => {
    if (document.visibilityState === "visible") void load();
  };
  document.addEventListener("visibilitychange", onVisible);

  void load();
  return {
    dispose() {
      disposed = true;
      notify.dispose();
      document.removeEventListener("visibilitychange", onVisible);
    },
  };
}

/** The status line's count of the sessions waiting for the person (read out by screen readers). */
function waitingText(count: number): string {
  if (count === 0) return "";
  return count === 1 ? "1 session is waiting for you." : `${count} sessions are waiting for you.`;
}

/** "5 min ago", or the date for anything older than a day. */
function updated(iso: string | null | undefined): string {
  if (!iso) return "";
  const then = new Date(iso);
  const seconds = Math.round((Date.now() - then.getTime()) / 1000);
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return then.toLocaleDateString();
}
