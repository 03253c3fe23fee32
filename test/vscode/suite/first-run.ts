// In-editor cases of the first run and the editor's chrome: the Overview's
// welcome content in each state of the server (read from the page), the
// walkthrough, the status item's icon and its menu, the view's title actions
// per state, Stop Server's question while a remote client is attached, and
// the sidecar's log lines at their own levels. They run right after the
// server started, before any session exists (the running welcome shows only
// while nothing is attached), and leave the server running as they found it.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { methods } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import type { ServerState } from "../../../extension/ctx.ts";
import { connectRemote, type RemoteClient } from "./remote-client.ts";
import { ui, waitFor, WAIT_MS, workspaceDir, type TestCase } from "./harness.ts";

export interface FirstRunDeps {
  api(): AcpRemoteApi;
}

/** The Overview's pane in the side bar, and its parts. */
const OVERVIEW = '.part.sidebar .pane:has(> .pane-header[aria-label^="Overview"])';
const WELCOME = `${OVERVIEW} .welcome-view-content`;
const DEFERRED_WELCOME = '.part.sidebar .pane:has(> .pane-header[aria-label^="Deferred"]) .welcome-view-content';
const TITLE_ACTIONS = `${OVERVIEW} > .pane-header .actions .action-label`;
const MORE_ACTIONS = `${OVERVIEW} > .pane-header .actions .action-label.codicon-toolbar-more`;
/** The status item (its label carries the accessibility label the extension sets: "ACP Remote: <state>…"). */
const statusItem = (state = ""): string => `.part.statusbar a.statusbar-item-label[aria-label^="ACP Remote: ${state}"]`;

interface PageElement {
  text: string;
  label: string | null;
  className: string;
}

async function elements(selector: string, contains?: string): Promise<PageElement[]> {
  return (await ui<{ elements: PageElement[] }>("pageElements", { selector, ...(contains === undefined ? {} : { contains }) })).elements;
}

async function welcomeText(contains: string): Promise<string> {
  await vscode.commands.executeCommand("acpRemote.focusView");
  return (await elements(WELCOME, contains)).map((e) => e.text).join("\n");
}

/** The title actions in the view's title bar (the … menu's button aside). */
async function titleActions(expected: string): Promise<string[]> {
  const labels = (await elements(TITLE_ACTIONS, expected)).map((e) => e.label ?? "");
  return labels.filter((l) => !/More Actions/.test(l));
}

/** The entries of the view's … menu. */
async function moreActions(expected: string): Promise<string[]> {
  await ui("clickPage", { selector: MORE_ACTIONS });
  try {
    return (await elements(".context-view .action-label", expected)).map((e) => e.text.trim()).filter((t) => t !== "");
  } finally {
    await ui("pressKey", { key: "Escape" });
  }
}

/** The status item's icon (its codicon's class) once it shows `state`. */
async function statusIcon(state: ServerState): Promise<string> {
  const [icon] = await elements(`${statusItem(state)} .codicon`);
  return icon!.className;
}

/** Clicks the status item; resolves with the rows of the menu it opens (closed again). */
async function statusMenu(expected: string, screenshot?: string): Promise<string[]> {
  await ui("clickPage", { selector: statusItem() });
  try {
    const rows = await elements(".quick-input-widget .quick-input-list .monaco-list-row", expected);
    if (screenshot) await ui("screenshot", { name: screenshot, element: ".quick-input-widget" });
    return rows.map((r) => r.text.replace(/\s+/g, " ").trim());
  } finally {
    await ui("pressKey", { key: "Escape" });
  }
}

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration("acpRemote").update(key, value, vscode.ConfigurationTarget.Workspace);
}

/** Every file under the editor's log folder (run.ts puts the user data beside the workspace). */
function logFiles(dir = join(workspaceDir(), "..", "ud", "logs")): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? logFiles(path) : [path];
  });
}

/** The lines of the ACP Remote log (its LogOutputChannel's files: one per window the run opened). */
function acpRemoteLog(): string[] {
  return logFiles()
    .filter((f) => f.includes("ACP Remote"))
    .flatMap((f) => readFileSync(f, "utf8").split("\n"));
}

/** Settles with the command's result, or rejects when it did not end within `ms` (it waits on a question nobody answers). */
function endsWithin<T>(what: string, work: Thenable<T>, ms = WAIT_MS): Promise<T> {
  return Promise.race([Promise.resolve(work), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not end: it waits on a question`)), ms).unref())]);
}

export function firstRunCases(deps: FirstRunDeps): TestCase[] {
  const remotes: RemoteClient[] = [];
  const running = async (): Promise<void> => {
    await waitFor("the server to run", () => deps.api().state === "running" && deps.api().status !== undefined);
  };
  const start = async (): Promise<void> => {
    await vscode.commands.executeCommand("acpRemote.start");
    await running();
  };
  /** A remote client that initialized: the server lists its connection. */
  const attach = async (): Promise<RemoteClient> => {
    const api = deps.api();
    const remote = connectRemote(api.server!.url, await api.token());
    remotes.push(remote);
    await remote.run((ctx) => ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }));
    await waitFor("the remote connection in the status", () => (api.status?.connections.length ?? 0) > 0);
    return remote;
  };
  const detachAll = async (): Promise<void> => {
    for (const r of remotes.splice(0)) r.close();
    await waitFor("no remote connection left", () => (deps.api().status?.connections.length ?? 0) === 0);
  };
  const agents = (): unknown => vscode.workspace.getConfiguration("acpRemote").inspect("agents")?.workspaceValue;

  return [
    {
      name: "first run | running with an agent and nothing attached: the Overview's welcome offers New Session and Connect a Device (the Deferred view's, a deferred completion); its title shows them and nothing else, Stop and Restart only in the … menu",
      needs: "browser",
      fn: async () => {
        // Title actions show without a hover, so that the page can read and click them.
        await vscode.workspace.getConfiguration("workbench").update("view.alwaysShowHeaderActions", true, vscode.ConfigurationTarget.Global);
        await running();
        const text = await welcomeText("The server is running");
        assert.match(text, /New Session/);
        assert.match(text, /Connect a Device/);
        assert.doesNotMatch(text, /Add Agent/, "an agent is configured: no offer to add one");
        const deferred = (await elements(DEFERRED_WELCOME, "Submit Deferred Completion")).map((e) => e.text).join("\n");
        assert.match(deferred, /in the background/);
        const title = await titleActions("Connect a Device");
        assert.deepEqual(title.map((l) => l.replace(/ \(.*\)$/, "")).sort(), ["Connect a Device", "New Session"], "at most three actions, none of Start, Stop, Restart");
        const more = await moreActions("Stop Server");
        for (const entry of ["Restart Server", "Stop Server", "Copy Connection URL", "Add Agent…", "Get Started", "Show Log"]) assert.ok(more.includes(entry), `${entry} in the … menu: ${more.join(", ")}`);
        assert.ok(!more.includes("Start Server"), "no Start while it runs");
      },
    },
    {
      name: "first run | the status item reads as a state: $(radio-tower) while running; a click opens its menu: Restart, Stop, New Session, Connect a Device, Show Permissions, Show Log (screenshot)",
      needs: "browser",
      fn: async () => {
        await running();
        const icon = await statusIcon("running");
        assert.match(icon, /codicon-radio-tower/);
        const rows = await statusMenu("Show Log", "status-menu");
        for (const row of ["Restart Server", "Stop Server", "New Session", "Connect a Device", "Show Permissions", "Show Log"]) {
          assert.ok(rows.some((r) => r.includes(row)), `${row} in the menu: ${rows.join(" | ")}`);
        }
        assert.ok(!rows.some((r) => r.includes("Start Server")), "no Start while it runs");
      },
    },
    {
      name: "first run | stopped: the Overview said \"server not running\" four times; its welcome offers Start Server, the status item shows $(circle-slash), not a stop button, and the title and the menu offer Start only (screenshot)",
      needs: "browser",
      fn: async () => {
        await vscode.commands.executeCommand("acpRemote.stop", { confirm: false });
        try {
          await waitFor("the server to stop", () => deps.api().state === "stopped");
          const text = await welcomeText("Start Server");
          assert.match(text, /Get Started/);
          const sidebar = await ui<{ text: string }>("treeText", { contains: "Start Server" });
          assert.doesNotMatch(sidebar.text, /server not running/);
          await ui("screenshot", { name: "welcome-view", element: ".part.sidebar" });
          const icon = await statusIcon("stopped");
          assert.match(icon, /codicon-circle-slash/);
          assert.doesNotMatch(icon, /debug-stop/);
          assert.deepEqual((await titleActions("Start Server")).map((l) => l.replace(/ \(.*\)$/, "")), ["Start Server"]);
          const more = await moreActions("Show Log");
          assert.ok(!more.some((e) => /Stop Server|Restart Server/.test(e)), `no Stop or Restart while stopped: ${more.join(", ")}`);
          const rows = await statusMenu("Start Server");
          assert.ok(!rows.some((r) => /Stop Server|Restart Server/.test(r)), rows.join(" | "));
        } finally {
          // The cases after this one need it running, whatever failed here.
          await start();
        }
      },
    },
    {
      name: "first run | failed (a malformed agent setting): the welcome points at the log and offers Start Server, the status item shows $(error)",
      needs: "browser",
      fn: async () => {
        const before = agents();
        try {
          await vscode.commands.executeCommand("acpRemote.stop", { confirm: false });
          await setSetting("agents", [{ name: "broken", command: "", args: [] }]);
          await vscode.commands.executeCommand("acpRemote.start");
          await waitFor("the failure", () => deps.api().state === "failed");
          const text = await welcomeText("did not start");
          assert.match(text, /Start Server/);
          assert.match(text, /log/);
          assert.match(await statusIcon("failed"), /codicon-error/);
          assert.deepEqual((await titleActions("Start Server")).map((l) => l.replace(/ \(.*\)$/, "")), ["Start Server"]);
        } finally {
          await setSetting("agents", before);
          await start();
        }
      },
    },
    {
      name: "first run | running with only the demo agent: the welcome offers Add Agent… beside a session with the demo",
      needs: "browser",
      fn: async () => {
        const before = agents();
        try {
          await setSetting("agents", []);
          await vscode.commands.executeCommand("acpRemote.restart", { confirm: false });
          await running();
          await waitFor("the embedded demo agent", () => deps.api().status?.agents.length === 1 && deps.api().status?.agents[0]?.name === "demo");
          const text = await welcomeText("Add Agent…");
          assert.match(text, /demo agent/);
          assert.match(text, /New Session with the Demo/);
        } finally {
          await setSetting("agents", before);
          await vscode.commands.executeCommand("acpRemote.restart", { confirm: false });
          await running();
          await waitFor("the configured agents again", () => deps.api().status?.agents.some((a) => a.name === "fixture"));
        }
      },
    },
    {
      name: "first run | Start Server while the server runs waited until its \"already running\" message was closed (a walkthrough button or another extension hung on it): it ends at once",
      fn: async () => {
        await running();
        const pid = deps.api().sidecarPid;
        await endsWithin("Start Server while the server runs", vscode.commands.executeCommand("acpRemote.start"));
        assert.equal(deps.api().sidecarPid, pid, "the running server is left as it is");
      },
    },
    {
      name: "first run | Get Started opens the walkthrough: its five steps, from starting the server to a paired phone; its Start Server button marks the first one done (screenshot)",
      needs: "browser",
      fn: async () => {
        await running();
        await vscode.commands.executeCommand("acpRemote.openWalkthrough");
        try {
          const titles = (await elements("h3.step-title", "Connect your phone")).map((e) => e.text.trim());
          assert.deepEqual(titles, ["Start the server", "Add an agent, or use the demo", "Start a session", "Approve a permission", "Connect your phone"]);
          // The step's button runs Start Server (the server runs already, so it only says so): its completion
          // event. The server started before the walkthrough was registered, which its context key alone would not mark.
          await ui("clickPage", { selector: ".step-description-container .monaco-button", hasText: "Start Server" });
          const done = await elements('button.getting-started-step[aria-checked="true"] h3.step-title', "Start the server");
          assert.ok(done.some((e) => e.text.trim() === "Start the server"));
          await ui("screenshot", { name: "walkthrough" });
        } finally {
          await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
        }
      },
    },
    {
      name: "first run | Stop Server stopped a server with a remote client attached without asking: now it asks (a modal naming the client) and the server runs on without a yes; Restart asks too; with nobody attached, or { confirm: false }, no question",
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        // Under test VS Code refuses every modal dialog and logs what it was asked
        // (the command then logs the refusal): that line is the question, and no answer is no yes.
        const questions = (text: string): string[] => acpRemoteLog().filter((l) => l.includes("refused to show dialog") && l.includes(text));
        // The setting's default: the suite's workspace turns the question off for the other cases.
        await setSetting("server.confirmStop", undefined);
        try {
          await attach();
          await endsWithin("Stop Server", vscode.commands.executeCommand("acpRemote.stop"));
          const stopQuestion = await waitFor("Stop Server's question", () => questions("Stop the ACP Remote server?")[0]);
          assert.match(stopQuestion, /Stop the ACP Remote server\? 1 client is connected: owner \((http1|http2|websocket)\)\./, "it says how many and who");
          assert.equal(api.state, "running", "without a yes the server runs on");

          await endsWithin("Restart Server", vscode.commands.executeCommand("acpRemote.restart"));
          await waitFor("Restart Server's question", () => questions("Restart the ACP Remote server? 1 client is connected").length > 0);
          assert.equal(api.state, "running");

          // Callers that ask the person themselves pass { confirm: false }.
          const pid = api.sidecarPid;
          await endsWithin("Restart Server with { confirm: false }", vscode.commands.executeCommand("acpRemote.restart", { confirm: false }));
          await running();
          assert.notEqual(api.sidecarPid, pid, "it restarted without a question");
          assert.equal(questions("Restart the ACP Remote server?").length, 1, "{ confirm: false } asked nothing");

          // Nobody attached: no question, it stops.
          await detachAll();
          await endsWithin("Stop Server with nobody attached", vscode.commands.executeCommand("acpRemote.stop"));
          assert.equal(api.state, "stopped");
          assert.equal(questions("Stop the ACP Remote server?").length, 1, "nobody attached: nothing asked");
        } finally {
          await detachAll().catch(() => undefined);
          await setSetting("server.confirmStop", false);
          await start();
        }
      },
    },
    {
      name: "first run | the log marked every line of the sidecar [error]: its lines keep their levels (listening is [info])",
      needs: "browser",
      fn: async () => {
        try {
          await running();
          const lines = await waitFor("the sidecar's listening line in the ACP Remote log", () => {
            const found = acpRemoteLog().filter((l) => l.includes("acp-remote: listening on"));
            return found.length > 0 ? found : undefined;
          });
          // "<date> <time> [info] acp-remote: listening on …": the editor's level, then the sidecar's text.
          assert.ok(lines.every((l) => /^\S+ \S+ \[info\] acp-remote: listening on /.test(l)), lines.join("\n"));
        } finally {
          await vscode.workspace.getConfiguration("workbench").update("view.alwaysShowHeaderActions", undefined, vscode.ConfigurationTarget.Global);
        }
      },
    },
  ];
}
