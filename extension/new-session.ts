// ACP Remote: New Session. The agent is picked from the configured ones (the
// default first; no question when there is one), the working folder is the
// workspace folder (picked when there are several; the home folder when none
// is open, as the sidecar needs an absolute one), then the session opens in
// its tab.
import { homedir } from "node:os";
import * as vscode from "vscode";
import { ControlRequest, type AgentInfo } from "../protocol/control.ts";
import type { Ctx } from "./ctx.ts";
import type { SessionPanels } from "./panels/session-panel.ts";

async function pickAgent(agents: AgentInfo[]): Promise<string | undefined> {
  if (agents.length === 0) throw new Error("no agent is configured");
  const ordered = [...agents].sort((a, b) => Number(b.isDefault) - Number(a.isDefault));
  if (ordered.length === 1) return ordered[0]!.name;
  const pick = await vscode.window.showQuickPick(
    ordered.map((a) => ({ label: a.name, description: `${a.state}${a.isDefault ? " · default" : ""}`, detail: a.command, name: a.name })),
    { title: "ACP Remote: New Session", placeHolder: "The agent of the new session" },
  );
  return pick?.name;
}

async function pickFolder(): Promise<string | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) return homedir();
  if (folders.length === 1) return folders[0]!.uri.fsPath;
  const pick = await vscode.window.showWorkspaceFolderPick({ placeHolder: "The working folder of the new session" });
  return pick?.uri.fsPath;
}

/** Starts a session and opens its tab; resolves with its id (undefined when the person backed out). `agent` skips the agent question. */
export async function newSession(ctx: Ctx, sessions: SessionPanels, agent?: string): Promise<string | undefined> {
  await ctx.refreshStatus();
  const name = agent ?? (await pickAgent(ctx.status?.agents ?? []));
  if (name === undefined) return undefined;
  const cwd = await pickFolder();
  if (cwd === undefined) return undefined;
  const opened = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `ACP Remote: starting a session on ${name}…` },
    () => ctx.client().sendRequest(ControlRequest.newSession, { agent: name, cwd }),
  );
  sessions.show(opened.sessionId);
  return opened.sessionId;
}
