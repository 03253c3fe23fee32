// The activity bar tree: the sidecar (address, state), then its agents,
// connections, sessions and paired devices. Redrawn from the whole status snapshot.
import * as vscode from "vscode";
import type { AgentInfo, ConnectionInfo, DeviceInfo, SessionInfo } from "../../protocol/control.ts";
import { connectionName, EDITOR_CONNECTION_NAME, sessionName } from "../../protocol/names.ts";
import { Command } from "../command-ids.ts";
import type { Ctx } from "../ctx.ts";
import { DEFAULT_DEVICE_AGE_REDRAW_MS } from "../limits.ts";
import { deviceTreeItem } from "../pairing/device-item.ts";
import { connectionDescription, sessionDescription, sessionFollowers } from "./session-labels.ts";

/** The sessions this editor shows in its tabs: they are attached to it. */
export interface EditorTabs {
  isOpen(sessionId: string): boolean;
  onDidChangeTabs: vscode.Event<void>;
}

export const TREE_VIEW_ID = "acpRemote.overview";

type Node =
  | { kind: "server" }
  | { kind: "group"; group: "agents" | "connections" | "sessions" | "devices" }
  | { kind: "agent"; agent: AgentInfo }
  | { kind: "connection"; connection: ConnectionInfo }
  /** The editor's own link to the server (the control channel its tabs use). */
  | { kind: "editor" }
  | { kind: "session"; session: SessionInfo }
  | { kind: "device"; device: DeviceInfo }
  | { kind: "empty"; text: string };

const GROUP_LABEL = { agents: "Agents", connections: "Connections", sessions: "Sessions", devices: "Devices" } as const;

export class OverviewTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  readonly #ctx: Ctx;
  readonly #tabs: EditorTabs;
  readonly #onDidChange = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.#onDidChange.event;
  readonly #subscriptions: vscode.Disposable[];

  constructor(ctx: Ctx, tabs: EditorTabs) {
    this.#ctx = ctx;
    this.#tabs = tabs;
    // A device's last use is written at most once a minute: between writes, only the redraw ages "used N min ago".
    const ageTimer = setInterval(() => {
      if ((ctx.status?.devices.length ?? 0) > 0) this.#onDidChange.fire(undefined);
    }, DEFAULT_DEVICE_AGE_REDRAW_MS);
    this.#subscriptions = [
      ctx.onDidChangeState(() => this.#onDidChange.fire(undefined)),
      ctx.onDidChangeStatus(() => this.#onDidChange.fire(undefined)),
      tabs.onDidChangeTabs(() => this.#onDidChange.fire(undefined)),
      { dispose: () => clearInterval(ageTimer) },
    ];
  }

  getChildren(node?: Node): Node[] {
    const status = this.#ctx.status;
    if (!node) return this.#showsWelcome() ? [] : [{ kind: "server" }, { kind: "group", group: "agents" }, { kind: "group", group: "connections" }, { kind: "group", group: "sessions" }, { kind: "group", group: "devices" }];
    if (node.kind !== "group") return [];
    const items: Node[] =
      node.group === "agents"
        ? (status?.agents ?? []).map((agent) => ({ kind: "agent", agent }))
        : node.group === "connections"
          ? [...(status ? [{ kind: "editor" } as const] : []), ...(status?.connections ?? []).map((connection) => ({ kind: "connection", connection }) as const)]
          : node.group === "sessions"
            ? (status?.sessions ?? []).map((session) => ({ kind: "session", session }))
            : (status?.devices ?? []).map((device) => ({ kind: "device", device }));
    return items.length > 0 ? items : [{ kind: "empty", text: "none" }];
  }

  /**
   * Nothing to show yet: the server is not running, or it runs with nobody
   * attached, no session and no agent failing. The tree is then empty and the
   * view shows its welcome content for the state (package.json viewsWelcome),
   * which says what to do next.
   */
  #showsWelcome(): boolean {
    const status = this.#ctx.status;
    if (!this.#ctx.isRunning || !status) return true;
    const failing = status.agents.some((a) => a.state === "failed");
    return !failing && status.sessions.length === 0 && status.connections.length === 0 && status.devices.length === 0;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "server": {
        const ctx = this.#ctx;
        const item = new vscode.TreeItem(ctx.server ? ctx.server.url : "Sidecar", vscode.TreeItemCollapsibleState.None);
        item.description = ctx.state;
        item.iconPath = new vscode.ThemeIcon(ctx.state === "running" ? "radio-tower" : ctx.state === "failed" ? "error" : "debug-stop");
        item.tooltip = ctx.lastError ? `${ctx.state}: ${ctx.lastError}` : ctx.server ? `acp-remote ${ctx.server.version} · data ${ctx.server.dataDir}` : ctx.state;
        item.contextValue = `server.${ctx.state}`;
        item.id = "server";
        return item;
      }
      case "group": {
        const status = this.#ctx.status;
        // This editor is one of the connections.
        const count = status ? status[node.group].length + (node.group === "connections" ? 1 : 0) : 0;
        const item = new vscode.TreeItem(GROUP_LABEL[node.group], vscode.TreeItemCollapsibleState.Expanded);
        item.description = status ? String(count) : "";
        item.id = `group.${node.group}`;
        return item;
      }
      case "agent": {
        const a = node.agent;
        const item = new vscode.TreeItem(a.name);
        item.description = `${a.state}${a.isDefault ? " · default" : ""}${a.restarts > 0 ? ` · ${a.restarts} restarts` : ""}`;
        item.tooltip = `${a.command}${a.pid ? ` (pid ${a.pid})` : ""}${a.lastError ? `\n${a.lastError}` : ""}`;
        item.iconPath = new vscode.ThemeIcon(a.state === "running" ? "hubot" : a.state === "failed" ? "error" : "loading~spin");
        item.id = `agent.${a.name}`;
        return item;
      }
      case "editor": {
        const shown = (this.#ctx.status?.sessions ?? []).filter((s) => this.#tabs.isOpen(s.sessionId)).map((s) => s.sessionId);
        const item = new vscode.TreeItem(EDITOR_CONNECTION_NAME);
        item.description = connectionDescription({ profile: "control", sessions: shown });
        item.tooltip = "The editor's own link to the server; the sessions open in its tabs";
        item.iconPath = new vscode.ThemeIcon("vm");
        item.id = "connection.editor";
        return item;
      }
      case "connection": {
        const c = node.connection;
        const item = new vscode.TreeItem(connectionName(c, this.#ctx.status?.devices ?? []));
        item.description = connectionDescription(c);
        item.tooltip = `${c.connectionId}\n${c.deviceId ? "a paired device" : `token of ${c.principal}`}\nconnected ${new Date(c.connectedAt).toLocaleString()}`;
        item.iconPath = new vscode.ThemeIcon("plug");
        item.id = `connection.${c.connectionId}`;
        return item;
      }
      case "session": {
        const s = node.session;
        const status = this.#ctx.status;
        const followers = status ? sessionFollowers(s, status, this.#tabs.isOpen(s.sessionId)) : [];
        const item = new vscode.TreeItem(sessionName(s));
        item.description = sessionDescription(s, followers);
        item.tooltip = `${s.sessionId}\nagent ${s.agent} · owner ${s.owner}\n${s.cwd}\n${item.description}`;
        item.iconPath = new vscode.ThemeIcon(followers.length > 0 ? (s.running ? "sync~spin" : "comment-discussion") : "debug-disconnect");
        item.command = { command: Command.openSession, title: "Open Session", arguments: [s.sessionId] };
        item.contextValue = "session";
        item.id = `session.${s.sessionId}`;
        return item;
      }
      case "device":
        return deviceTreeItem(node.device, Date.now());
      case "empty": {
        const item = new vscode.TreeItem(node.text);
        item.description = "";
        return item;
      }
    }
  }

  dispose(): void {
    this.#onDidChange.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
