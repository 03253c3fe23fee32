// In-editor cases of session tabs that keep what the person typed and what
// the session was: the server stopped (Send disabled with the reason and a
// Start Server button, the draft kept), Close Session, the Mode selector
// after a restart, a tab after a window reload while the server is stopped
// (the last case before the reload marks its session; the cases after it
// check what came back), and one name for a session and for a connection in
// the tree, the tab and the phone's session list. They need the server
// running with the fixture agent (the suite's first case starts it).
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { methods, type ClientContext } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import { AcpExt } from "../../../protocol/acp.ts";
import { EDITOR_CONNECTION_NAME, sessionName } from "../../../protocol/names.ts";
import type { RemoteClient } from "./remote-client.ts";
import { hasBrowser, inNotificationCentre, ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";
import { tabOf } from "./session-tab.ts";

/** In every case's name: ACP_REMOTE_VSCODE_GREP="tabs |" runs these alone (the reload included). */
const PREFIX = "tabs |";
const COMPOSER = "textarea.sv-input";
/** A fixture script: what the draft kept while the server was stopped says once it is sent. */
const DRAFT = "echo sent once the server ran again";
/** What the session of the reload case said before the reload. */
const BEFORE_RELOAD = "echo said before the reload";

export interface TabsDeps {
  api(): AcpRemoteApi;
  /** A remote client the suite closes at its end; `token` instead of the server's own (a paired device's). */
  remote(agent?: string, token?: string): Promise<RemoteClient>;
}

/** What the cases after the reload need from the ones before. */
export interface TabsReloadMark {
  tabs?: {
    /** The fixture session whose tab set the Mode to "code" and said something before the reload. */
    sessionId: string;
    /** The name of the session whose tab was in front when the window reloaded (the one the reload mark names). */
    frontName: string;
  };
}

/** The sessions whose tabs the case running now opened: they close when it ends. */
const openedTabs: string[] = [];

/** A fixture session started with New Session: its tab opens and shows it. */
async function newFixtureSession(): Promise<string> {
  const sessionId = await vscode.commands.executeCommand<string | undefined>("acpRemote.newSession", "fixture");
  assert.ok(typeof sessionId === "string" && sessionId !== "", "New Session resolves with the session's id");
  openedTabs.push(sessionId);
  await connected(sessionId);
  return sessionId;
}

async function connected(sessionId: string): Promise<void> {
  const { value } = await ui<{ value: string | null }>("webviewAttribute", { selector: `${tabOf(sessionId)} .sv-root`, name: "data-connection", equals: "connected" });
  assert.equal(value, "connected", "the tab shows its session");
}

async function inFront(sessionId: string): Promise<void> {
  await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
}

/** Waits until the tab's composer says whether the session takes a prompt. */
async function unavailable(sessionId: string, equals: "true" | "false"): Promise<void> {
  const { value } = await ui<{ value: string | null }>("webviewAttribute", { selector: `${tabOf(sessionId)} form.sv-composer`, name: "data-unavailable", equals });
  assert.equal(value, equals, `the composer's data-unavailable is ${equals}`);
}

async function composerValue(sessionId: string): Promise<string> {
  return (await ui<{ value: string }>("webviewInputValue", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${COMPOSER}` })).value;
}

async function logText(sessionId: string, contains: string): Promise<string> {
  return (await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} [role=log]`, contains })).text;
}

/** The tab's Mode selector (waits until it shows): its value, and which of `ids` it offers, of how many options. */
async function modeOptions(sessionId: string, ids: string[]): Promise<{ value: string; offered: string[]; options: number }> {
  const select = `${tabOf(sessionId)} select.sv-mode`;
  const { value } = await ui<{ value: string }>("webviewInputValue", { frameSelector: tabOf(sessionId), selector: select });
  const offered: string[] = [];
  for (const id of ids) if ((await count(sessionId, `select.sv-mode option[value="${id}"]`)) === 1) offered.push(id);
  return { value, offered, options: await count(sessionId, "select.sv-mode option") };
}

async function count(sessionId: string, selector: string): Promise<number> {
  return (await ui<{ count: number }>("webviewCount", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${selector}` })).count;
}

/** The labels of the editor's session tabs (webview tabs of the session view). */
function sessionTabLabels(): string[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith("acpRemote.session"))
    .map((t) => t.label);
}

/**
 * Closes the tabs of these sessions: the cases after these read webviews by
 * selectors any session tab matches, so none of these is left behind.
 */
async function closeTabs(api: AcpRemoteApi, sessionIds: string[]): Promise<void> {
  const names = new Set(
    sessionIds.map((sessionId) => {
      const info = api.status?.sessions.find((s) => s.sessionId === sessionId);
      return sessionName(info ?? { sessionId, agent: "fixture" });
    }),
  );
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith("acpRemote.session") && names.has(t.label));
  await vscode.window.tabGroups.close(tabs);
}

async function remoteSession(r: RemoteClient): Promise<{ ctx: ClientContext; sessionId: string }> {
  return r.run(async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
    return { ctx, sessionId };
  });
}

async function serverState(api: AcpRemoteApi, state: "running" | "stopped"): Promise<void> {
  await waitFor(`the server ${state}`, () => api.state === state && (state === "stopped" || api.status !== undefined));
}

/** Each case starts with the server running, whatever the one before left (a failed case may leave it stopped). */
async function running(api: AcpRemoteApi): Promise<void> {
  if (api.state !== "running") await vscode.commands.executeCommand("acpRemote.start");
  await serverState(api, "running");
}

/** Set by the Mode case: the session whose tab holds its transcript and mode across the reload. */
let reloadSessionId: string | undefined;

export function tabsCases(deps: TabsDeps): TestCase[] {
  const cases: TestCase[] = [
    {
      name: `${PREFIX} regression: with the server stopped, Enter in the tab cleared the draft and the error landed off-screen; now Send is disabled by the reason and a Start Server button, the draft stays and goes once the server runs (screenshot)`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        await running(api);
        const sessionId = await newFixtureSession();
        // The new session's tab is in front (Open Session says only that the server is not running while it is stopped).
        await vscode.commands.executeCommand("acpRemote.stop", { confirm: false });
        await serverState(api, "stopped");
        // What the person sees first: the tab says the server is stopped.
        await unavailable(sessionId, "true");
        await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${COMPOSER}`, text: DRAFT, press: "Enter" });
        assert.equal(await composerValue(sessionId), DRAFT, "Enter kept the draft");
        const { text } = await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} .sv-unavailable`, contains: "server is stopped" });
        assert.match(text, /Start Server/, "the reason comes with its button");
        assert.equal(await count(sessionId, ".sv-error"), 0, "no error was put in the transcript for a prompt never sent");
        assert.equal(await count(sessionId, "button.sv-send:disabled"), 1, "Send is disabled");
        await ui("screenshot", { name: "editor-tab-server-stopped", frameSelector: tabOf(sessionId) });
        await ui("clickWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} .sv-unavailable-action` });
        await serverState(api, "running");
        await connected(sessionId);
        await unavailable(sessionId, "false");
        assert.equal(await composerValue(sessionId), DRAFT, "the draft outlived the restart of the server");
        await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${COMPOSER}`, text: DRAFT, press: "Enter" });
        await logText(sessionId, "sent once the server ran again");
      },
    },
    {
      name: `${PREFIX} regression: after Close Session the tab stayed, still saying it was connected; now Close Session closes the session's tab`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        await running(api);
        const sessionId = await newFixtureSession();
        const name = sessionName({ sessionId, agent: "fixture" });
        await waitFor("the tab named after its session", () => sessionTabLabels().includes(name));
        await inFront(sessionId);
        // As the tab's title button does, once the person confirms.
        const closing = Promise.resolve(vscode.commands.executeCommand("acpRemote.closeSession", sessionId));
        await inNotificationCentre(() => ui("clickNotificationButton", { label: "Close Session" }));
        await closing;
        await waitFor("the session to end", () => api.status !== undefined && !api.status.sessions.some((s) => s.sessionId === sessionId));
        await waitFor("the closed session's tab to go", () => !sessionTabLabels().includes(name));
      },
    },
    {
      name: `${PREFIX} regression: a session closed elsewhere left its tab saying it was connected, and Enter cleared the text for an error; now the tab says the session was closed and Enter keeps the text`,
      needs: "browser",
      fn: async () => {
        await running(deps.api());
        // A session a remote client closes: its tab stays, to read, and says it takes no more prompts.
        const r = await deps.remote();
        const { ctx, sessionId } = await remoteSession(r);
        openedTabs.push(sessionId);
        await inFront(sessionId);
        await connected(sessionId);
        await ctx.request(methods.agent.session.close, { sessionId });
        await unavailable(sessionId, "true");
        await ui("webviewText", { selector: `${tabOf(sessionId)} .sv-unavailable`, contains: "This session was closed" });
        await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${COMPOSER}`, text: "echo too late", press: "Enter" });
        assert.equal(await composerValue(sessionId), "echo too late", "Enter kept the text");
        assert.equal(await count(sessionId, ".sv-error"), 0, "no error for a prompt never sent");
      },
    },
    {
      name: `${PREFIX} regression: after a server restart the Mode selector vanished from the tab (the phone got it back); now it is back with the session's mode`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        await running(api);
        const sessionId = await newFixtureSession();
        assert.deepEqual(await modeOptions(sessionId, ["ask", "code"]), { value: "ask", offered: ["ask", "code"], options: 2 });
        await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} ${COMPOSER}`, text: BEFORE_RELOAD, press: "Enter" });
        await logText(sessionId, "said before the reload");
        // The tab the window reload at the end of the run brings back.
        reloadSessionId = sessionId;
        await vscode.commands.executeCommand("acpRemote.restart", { confirm: false });
        await serverState(api, "running");
        await connected(sessionId);
        // What a phone's session/load gets of the session's modes now, the tab shows.
        const r = await deps.remote();
        const loaded = await r.run(async (ctx) => {
          await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
          const answer = await ctx.request(methods.agent.session.load, { sessionId, cwd: workspaceDir(), mcpServers: [] });
          // The phone lets go of the session (its connection's end would end the session, which the window reload needs).
          await ctx.request(AcpExt.sessionDetach, { sessionId });
          return answer;
        });
        assert.ok(loaded.modes, "the phone gets the modes");
        const ids = loaded.modes.availableModes.map((m) => m.id);
        assert.deepEqual(await modeOptions(sessionId, ids), { value: loaded.modes.currentModeId, offered: ids, options: ids.length }, "the tab's Mode selector is back, as the phone's");
      },
    },
    {
      name: `${PREFIX} regression: the tree named a session by its id's head and called it detached while its tab was open, the tab by the id's tail; now both say "agent · short id" and the tree says it is attached to this editor`,
      needs: "browser",
      fn: async () => {
        await running(deps.api());
        const sessionId = await newFixtureSession();
        const name = sessionName({ sessionId, agent: "fixture" });
        assert.match(name, /^fixture · [\w-]{6}$/);
        await waitFor("the tab named after its session", () => sessionTabLabels().includes(name));
        assert.equal((await ui<{ text: string }>("webviewText", { selector: `${tabOf(sessionId)} h1.sv-title`, contains: name })).text.trim(), name, "the tab's heading says the name too");
        await vscode.commands.executeCommand("acpRemote.focusView");
        const tree = await ui<{ text: string }>("treeText", { contains: name });
        const line = tree.text.split("\n").findIndex((l) => l.includes(name));
        assert.match(tree.text.split("\n").slice(line, line + 2).join(" "), new RegExp(`attached to ${EDITOR_CONNECTION_NAME}`), "the tree says the session is open here");
        assert.doesNotMatch(tree.text, new RegExp(sessionId.slice(0, 12)), "no session is named by the head of its id");
      },
    },
    {
      name: `${PREFIX} regression: a phone's connection showed as "owner" in the tree, not the device's name; now the tree names it by the device and the editor as "${EDITOR_CONNECTION_NAME}", and the phone's session list names sessions as the tree does (screenshot)`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        await running(api);
        const label = "Pixel 8";
        const pairing = vscode.commands.executeCommand("acpRemote.connectDevice");
        await ui("inputBox", { text: label });
        await pairing;
        const { text } = await ui<{ text: string }>("webviewText", { selector: "#pairing-link", contains: "#token=" });
        const link = text.trim();
        const token = new URLSearchParams(link.slice(link.indexOf("#") + 1)).get("token")!;
        const device = await waitFor("the device in the status", () => api.status?.devices.find((d) => d.label === label));
        try {
          // The phone, with its own token, on a session of its own.
          const phone = await deps.remote(undefined, token);
          const { sessionId } = await remoteSession(phone);
          await waitFor("the phone's connection in the status", () => api.status?.connections.find((c) => c.deviceId === device.deviceId && c.sessions.includes(sessionId)));
          // Open here too: the session is followed by this editor and by the phone.
          openedTabs.push(sessionId);
          await inFront(sessionId);
          await connected(sessionId);
          await vscode.commands.executeCommand("acpRemote.focusView");
          const tree = await ui<{ text: string }>("treeText", { contains: `attached to ${EDITOR_CONNECTION_NAME}, ${label}` });
          await ui("screenshot", { name: "tree-names", element: ".part.sidebar" });
          assert.match(tree.text, new RegExp(`${label}\\s*\\S+ · 1 session`), `the connection is named by its device; the tree:\n${tree.text}`);
          assert.match(tree.text, new RegExp(`${EDITOR_CONNECTION_NAME}\\s*control`), `the editor's own link is this editor; the tree:\n${tree.text}`);
          // The phone's list: the same names as the tree's (untitled sessions are "agent · short id").
          const names = (api.status?.sessions ?? []).map((s) => sessionName(s));
          const listed = await ui<{ text: string; count: number }>("openPage", { url: link, selector: ".wc-item-title", screenshot: "web-sessions-names" });
          const phoneName = sessionName({ sessionId, agent: "fixture" });
          assert.match(listed.text, new RegExp(phoneName), "the phone's own session, named as the tree names it");
          for (const line of listed.text.split("\n").map((l) => l.replace(/(waiting for you|running|idle|failed)$/, "").trim()).filter(Boolean)) {
            assert.ok(names.includes(line), `the phone lists "${line}" by a name the tree uses (${names.join(" | ")})`);
          }
          phone.close();
        } finally {
          // The device goes again (the pairing cases pair one of their own).
          const revoking = vscode.commands.executeCommand("acpRemote.revokeDevice", device.deviceId);
          await inNotificationCentre(() => ui("clickNotificationButton", { label: "Revoke" }));
          await revoking;
          // The pairing panel goes with its device.
          await waitFor("the pairing panel to close", () => !vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.label === "ACP Remote: Connect a Device"));
        }
      },
    },
  ];
  // Each case closes the tabs it opened, whatever its outcome.
  return cases.map((c) => ({
    ...c,
    fn: async () => {
      try {
        await c.fn();
      } finally {
        await closeTabs(deps.api(), openedTabs.splice(0));
      }
    },
  }));
}

/** The session whose tab the window reload ends with, when no other case left one. */
export function tabsReloadPending(): string | undefined {
  return reloadSessionId;
}

/**
 * Before the reload, while the server runs, with the tab that is to come back
 * in front: its session's name, once its page has it (the page keeps it in its
 * state, which the reload restores).
 */
export async function tabsReloadMark(api: AcpRemoteApi, frontSessionId: string | undefined): Promise<TabsReloadMark> {
  const front = api.status?.sessions.find((s) => s.sessionId === frontSessionId);
  if (reloadSessionId === undefined || front === undefined || !hasBrowser()) return {};
  const frontName = sessionName(front);
  await ui("webviewText", { selector: `${tabOf(front.sessionId)} h1.sv-title`, contains: frontName });
  return { tabs: { sessionId: reloadSessionId, frontName } };
}

/**
 * The case after the reload, before any other starts the server: the tab in
 * front came back named as before, says the server is stopped with a Start
 * Server button, and once started shows its session; the Mode case's tab has
 * its Mode again. It leaves the server stopped, as it found it.
 */
export function tabsAfterReloadCases(mark: { sessionId: string } & TabsReloadMark, deps: { api(): AcpRemoteApi }): TestCase[] {
  const tabs = mark.tabs;
  if (tabs === undefined) return [];
  return [
    {
      name: `${PREFIX} regression: after a window reload with the server stopped the tab came back as a blank "Disconnected" pane without its agent's name; now it keeps its name and offers Start Server, and shows the session once started (screenshot)`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        const front = mark.sessionId;
        assert.equal(api.state, "stopped", "the window came back with the server stopped");
        await unavailable(front, "true");
        await ui("webviewText", { selector: `${tabOf(front)} .sv-unavailable`, contains: "server is stopped" });
        assert.ok(sessionTabLabels().includes(tabs.frontName), `the tab kept its name "${tabs.frontName}" (tabs: ${sessionTabLabels().join(" | ")})`);
        const heading = await ui<{ text: string }>("webviewText", { selector: `${tabOf(front)} h1.sv-title`, contains: tabs.frontName });
        assert.equal(heading.text.trim(), tabs.frontName, "and so did its heading");
        await ui("screenshot", { name: "editor-tab-after-reload", frameSelector: tabOf(front) });
        await ui("clickWebview", { frameSelector: tabOf(front), selector: `${tabOf(front)} .sv-unavailable-action` });
        await serverState(api, "running");
        await connected(front);
        await unavailable(front, "false");
        await waitFor("the transcript back", async () => (await count(front, "article.sv-user")) > 0);
        // The Mode case's tab: its selector and what it said are back too.
        await inFront(tabs.sessionId);
        await connected(tabs.sessionId);
        await logText(tabs.sessionId, "said before the reload");
        assert.deepEqual((await modeOptions(tabs.sessionId, ["ask", "code"])).offered, ["ask", "code"], "the Mode selector is back");
        await inFront(front);
        await vscode.commands.executeCommand("acpRemote.stop", { confirm: false });
        await serverState(api, "stopped");
      },
    },
  ];
}
