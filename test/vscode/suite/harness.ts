// What the in-editor tests share: a tiny test runner that reports each case
// on the extension host's console (run.ts counts them), waiting helpers, and
// the channel to run.ts, which drives the browser (clicks in webviews,
// screenshots) when a test asks it to.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { AcpRemoteApi } from "../../../extension/api.ts";

export const EXTENSION_ID = "acp-remote.acp-remote";
/** Generous: the machines are slow and several suites may run at once. */
export const WAIT_MS = 60_000;

export interface TestCase {
  name: string;
  /** "browser": what the case checks only a browser sees; without one it is reported skipped, not passed. */
  needs?: "browser";
  /** Runs even when ACP_REMOTE_VSCODE_GREP picks other cases (the ones the others need, such as starting the server). */
  setup?: boolean;
  fn: () => Promise<void>;
}

/** Runs the cases in order; a failure is reported and the next case still runs. */
export async function runCases(cases: TestCase[]): Promise<number> {
  let failed = 0;
  // ACP_REMOTE_VSCODE_GREP=text runs only the cases whose name holds it (and the setup ones), when iterating on a few.
  const grep = process.env["ACP_REMOTE_VSCODE_GREP"];
  for (const [i, c] of cases.entries()) {
    if (grep && !c.setup && !c.name.includes(grep)) continue;
    const started = Date.now();
    if (c.needs === "browser" && !hasBrowser()) {
      // TAP's skip directive: counted apart from the passes.
      console.log(`ok ${i + 1} - ${c.name} # SKIP needs a browser driving the window (test/vscode/run.ts)`);
      continue;
    }
    try {
      if (c.needs === "browser") await clearNotifications();
      await c.fn();
      console.log(`ok ${i + 1} - ${c.name} (${Date.now() - started} ms)`);
    } catch (err) {
      failed++;
      console.log(`not ok ${i + 1} - ${c.name}\n  ${err instanceof Error ? (err.stack ?? err.message).replace(/\n/g, "\n  ") : String(err)}`);
    }
  }
  console.log(`1..${cases.length}`);
  return failed;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function extensionApi(): Promise<AcpRemoteApi> {
  const ext = vscode.extensions.getExtension<AcpRemoteApi>(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed`);
  return ext.activate();
}

export function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error("the test workspace folder is not open");
  return folder.uri.fsPath;
}

function reloadMarkFile(): string {
  return join(workspaceDir(), "..", "reload.json");
}

/**
 * Before `workbench.action.reloadWindow`: what the cases after the reload need.
 * The reload starts the suite again in the new extension host; run() finds the
 * mark and runs the cases that check what survived.
 */
export function markReload(data: unknown): void {
  writeFileSync(reloadMarkFile(), JSON.stringify(data));
}

/** The mark of the reload this run follows (taken once, so the next run starts afresh), or undefined. */
export function takeReloadMark<T>(): T | undefined {
  const file = reloadMarkFile();
  if (!existsSync(file)) return undefined;
  const data = JSON.parse(readFileSync(file, "utf8")) as T;
  rmSync(file);
  return data;
}

interface UiChannel {
  url: string;
}

function channelFile(): string {
  return join(workspaceDir(), "..", "ui.json");
}

/**
 * Whether a browser drives this window (code-server + Playwright). Under
 * @vscode/test-electron there is none: the cases skip what only a browser can
 * see, and answer permissions through the command the notification links use.
 */
/**
 * Empties the notification centre. It is a virtual list that keeps its
 * place: with earlier notifications in it, a new one may be drawn out of
 * view. Every case that drives the page starts with it empty (runCases); a
 * case that reads one of its own notifications after others may clear it
 * again.
 */
export async function clearNotifications(): Promise<void> {
  await vscode.commands.executeCommand("notifications.clearAll");
}

/** Runs `action` with the notification centre open (it lists toasts and hidden ones alike), and closes it again. */
export async function inNotificationCentre<T>(action: () => Promise<T>): Promise<T> {
  await vscode.commands.executeCommand("notifications.showList");
  try {
    return await action();
  } finally {
    await vscode.commands.executeCommand("notifications.hideList");
  }
}

/** Waits until a notification shows `text`, read from the page. */
export async function notificationShows(text: string): Promise<void> {
  await inNotificationCentre(() => ui("notificationText", { contains: text }));
}

export function hasBrowser(): boolean {
  return existsSync(channelFile());
}

/**
 * Asks run.ts to act in the browser; resolves with its JSON answer. Without a
 * browser, a permission is answered through the command its notification links
 * use and a screenshot is not taken; any other action (one that reads what the
 * browser shows) throws, so no case reads an answer that is not there.
 */
export async function ui<T = unknown>(action: string, args: Record<string, unknown> = {}): Promise<T> {
  if (!hasBrowser()) {
    if (action === "clickPermission") {
      await vscode.commands.executeCommand("acpRemote.answerPermission", args["permissionId"], args["optionId"]);
      return undefined as T;
    }
    if (action === "screenshot") return undefined as T;
    throw new Error(`ui ${action} needs a browser driving the window (test/vscode/run.ts); guard the case with hasBrowser() or needs: "browser"`);
  }
  const channel = JSON.parse(readFileSync(channelFile(), "utf8")) as UiChannel;
  const res = await fetch(channel.url, { method: "POST", body: JSON.stringify({ action, ...args }), headers: { "content-type": "application/json" } });
  const body = (await res.json()) as { ok: boolean; result?: T; error?: string };
  if (!body.ok) throw new Error(`ui ${action}: ${body.error}`);
  return body.result as T;
}
