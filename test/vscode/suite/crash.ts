// In-editor cases of a turn the server's death cuts off: the sidecar is
// killed (SIGKILL, as a crash or an out-of-memory kill would) while a turn
// waits on a permission. The extension starts it again; the session tab and a
// phone's page that follow the session must both say the turn was
// interrupted, the tool card too, and a new prompt must work. The server runs
// on a fixed port meanwhile, as a paired phone needs (it comes back where the
// phone looks for it). They need the server running with the fixture agent,
// and a browser for the tab and the phone.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import * as vscode from "vscode";
import { methods } from "@agentclientprotocol/sdk";
import type { AcpRemoteApi } from "../../../extension/api.ts";
import type { RemoteClient } from "./remote-client.ts";
import { ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";
import { tabOf } from "./session-tab.ts";

/** How soon after the server is back every view must show the turn's end, in milliseconds. */
const SHOWN_WITHIN_MS = 5_000;
const INTERRUPTED = "Turn interrupted: the server stopped";
const TOOL = "Edit README.md";
const PHONE = "crash-phone";

export interface CrashDeps {
  api(): AcpRemoteApi;
  /** A remote client the suite closes at its end. */
  remote(agent?: string): Promise<RemoteClient>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Restarts the server on `port` (0: any free one); resolves once it runs. */
async function serveOn(api: AcpRemoteApi, port: number): Promise<void> {
  await vscode.commands.executeCommand("acpRemote.stop");
  await vscode.workspace.getConfiguration("acpRemote").update("server.port", port, vscode.ConfigurationTarget.Workspace);
  await vscode.commands.executeCommand("acpRemote.start");
  await waitFor("the server to run", () => api.state === "running" && api.status !== undefined);
}

/** Milliseconds since `from`, once `shown` resolves. */
async function after(from: number, shown: Promise<unknown>): Promise<number> {
  await shown;
  return Date.now() - from;
}

export function crashCases(deps: CrashDeps): TestCase[] {
  return [
    {
      name: `crash | regression: the sidecar killed while a permission waits left the turn pending for ever; the session tab and a phone page show "${INTERRUPTED}" within 5 s of the restart, the tool card interrupted, and a new prompt works (screenshots)`,
      needs: "browser",
      fn: async () => {
        const api = deps.api();
        await serveOn(api, await freePort());
        try {
          const r = await deps.remote();
          const { ctx, sessionId } = await r.run(async (c) => {
            await c.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
            const created = await c.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
            return { ctx: c, sessionId: created.sessionId };
          });
          // Its answer never comes: the server that would give it dies.
          void ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `echo Reading the README first.\npermission ${TOOL}` }] }).catch(() => undefined);
          await waitFor("the editor's permission request", () => api.permissions().find((e) => e.state === "pending" && e.info.toolCall.title === TOOL));

          // The editor's tab and a phone follow the session; both show the request waiting.
          await vscode.commands.executeCommand("acpRemote.openSession", sessionId);
          const log = `${tabOf(sessionId)} [role=log]`;
          await ui("webviewText", { selector: `${log} .sv-perm`, contains: TOOL });
          const token = await api.token();
          await ui("phoneOpen", {
            name: PHONE,
            url: `${api.server!.url}/#token=${token}`,
            waitFor: ".wc-list",
            hash: `#/s/fixture/${encodeURIComponent(sessionId)}`,
            thenWaitFor: ".sv-perm .sv-perm-options",
          });

          const pid = api.sidecarPid;
          assert.ok(pid, "the sidecar reports its pid");
          process.kill(pid, "SIGKILL");
          await waitFor("a new sidecar", () => api.state === "running" && api.sidecarPid !== undefined && api.sidecarPid !== pid && api.status !== undefined);
          const back = Date.now();

          // Both views, at the same time: each within the bound of the restart.
          const [inTab, onPhone] = await Promise.all([
            after(back, ui("webviewText", { selector: log, contains: INTERRUPTED })),
            after(back, ui("phoneText", { name: PHONE, selector: ".sv-transcript", contains: INTERRUPTED })),
          ]);
          assert.ok(inTab <= SHOWN_WITHIN_MS, `the tab showed the turn's end ${inTab} ms after the restart`);
          assert.ok(onPhone <= SHOWN_WITHIN_MS, `the phone showed the turn's end ${onPhone} ms after the restart`);

          // The tool card is interrupted, not pending, and the request withdrawn, in both.
          const tabCards = await ui<{ count: number }>("webviewCount", { frameSelector: tabOf(sessionId), selector: `${log} .sv-tool[data-status="interrupted"]` });
          assert.equal(tabCards.count, 1, "the tab's tool card is interrupted");
          const pendingInTab = await ui<{ count: number }>("webviewCount", { frameSelector: tabOf(sessionId), selector: `${log} .sv-tool[data-status="pending"], ${log} .sv-perm-options` });
          assert.equal(pendingInTab.count, 0, "nothing in the tab waits any more");
          const phoneCards = await ui<{ count: number }>("phoneText", { name: PHONE, selector: '.sv-tool[data-status="interrupted"]' });
          assert.equal(phoneCards.count, 1, "the phone's tool card is interrupted");
          const phonePerm = await ui<{ text: string }>("phoneText", { name: PHONE, selector: ".sv-perm", contains: "Withdrawn", screenshot: "web-turn-interrupted" });
          assert.match(phonePerm.text, new RegExp(TOOL.replace(".", "\\.")));
          await ui("screenshot", { name: "editor-turn-interrupted", frameSelector: tabOf(sessionId) });

          // A new prompt from the tab: the agent is started again, and both views follow the turn.
          await ui("typeWebview", { frameSelector: tabOf(sessionId), selector: `${tabOf(sessionId)} textarea.sv-input`, text: "echo Back after the restart.", press: "Enter" });
          await ui("webviewText", { selector: log, contains: "Back after the restart." });
          await ui("phoneText", { name: PHONE, selector: ".sv-transcript .sv-agent", contains: "Back after the restart." });
        } finally {
          await ui("phoneClose", { name: PHONE }).catch(() => undefined);
          await serveOn(api, 0);
        }
      },
    },
  ];
}
