// The person's sessions, newest first, across the configured agents (a
// connection lists the sessions of its own agent), and the form that starts
// a new one: an agent and a folder (the agent's default folder to start with).
import type { SessionInfo } from "@agentclientprotocol/sdk";
import { AcpClient, runningFlag } from "./acp-client.ts";
import type { AgentList } from "./agents.ts";
import { h } from "./dom.ts";
import type { Endpoint } from "./endpoint.ts";
import { describe, type Screen } from "./screen.ts";
import { UnauthorizedError } from "./transport.ts";

export interface ListScreenOptions {
  root: HTMLElement;
  endpoint: Omit<Endpoint, "agent">;
  agents: AgentList;
  onOpen(agent: string, sessionId: string): void;
  onNew(agent: string, cwd: string): void;
  onUnauthorized(): void;
  onForget(): void;
}

interface Listed extends SessionInfo {
  agent: string;
}

export function openListScreen(options: ListScreenOptions): Screen {
  let disposed = false;
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

  options.root.replaceChildren(
    h(
      "main",
      { class: "wc-list" },
      h("header", { class: "wc-top" }, h("h1", {}, "ACP Remote"), refresh),
      form,
      h("h2", {}, "Sessions"),
      status,
      list,
      h("footer", { class: "wc-foot" }, forget),
    ),
  );

  async function listAgent(agent: string): Promise<Listed[]> {
    const client = await AcpClient.connect({ ...options.endpoint, agent }, { onUpdate() {}, onPermission() {}, onPermissionWithdrawn() {}, onEnd() {} });
    try {
      return (await client.listSessions()).map((s) => ({ ...s, agent }));
    } finally {
      client.close();
    }
  }

  async function load(): Promise<void> {
    list.setAttribute("aria-busy", "true");
    status.textContent = "Loading sessions…";
    // Each agent answers for itself: one that cannot start hides no other's sessions.
    const results = await Promise.allSettled(options.agents.map((a) => listAgent(a.name)));
    if (disposed) return;
    if (results.some((r) => r.status === "rejected" && r.reason instanceof UnauthorizedError)) return options.onUnauthorized();
    const sessions = results.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
    const failures = results.flatMap((r, i) => (r.status === "rejected" ? [`${options.agents[i]!.name}: ${describe(r.reason)}`] : []));
    sessions.sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""));
    list.replaceChildren(...sessions.map(item));
    const failed = failures.length === 0 ? "" : `Could not load the sessions of ${failures.join("; ")}`;
    status.textContent = failed !== "" ? failed : sessions.length === 0 ? "No sessions yet." : "";
    status.classList.toggle("wc-error", failed !== "");
    list.setAttribute("aria-busy", "false");
  }

  function item(session: Listed): HTMLElement {
    const running = runningFlag(session) === true;
    const button = h(
      "button",
      { type: "button", class: "wc-item", "data-session-id": session.sessionId },
      h("span", { class: "wc-item-title" }, session.title || "Untitled session", running ? h("span", { class: "wc-running", title: "A turn is running" }, "running") : null),
      h("span", { class: "wc-item-meta" }, session.cwd),
      h("span", { class: "wc-item-meta" }, [options.agents.length > 1 ? session.agent : "", updated(session.updatedAt)].filter(Boolean).join(" · ")),
    );
    button.addEventListener("click", () => options.onOpen(session.agent, session.sessionId));
    return h("li", {}, button);
  }

  void load();
  return {
    dispose() {
      disposed = true;
    },
  };
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
