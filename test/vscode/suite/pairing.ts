// In-editor cases of device pairing: Connect a Device (a label, then the
// panel with the QR code and the pairing link), the device in the Overview,
// Revoke from the tree's context menu, and the link as code-server gives it
// (asExternalUri: its /proxy/PORT/) opening the web client through that
// proxy. They need the server running (the suite's first case starts it) and
// a browser to read the panel.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { clearNotifications, extensionApi, inNotificationCentre, ui, waitFor, workspaceDir, type TestCase } from "./harness.ts";

const LABEL = "Tablet";

/** Every file under the editor's log folder (run.ts puts the user data beside the workspace). */
function logFiles(dir = join(workspaceDir(), "..", "ud", "logs")): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? logFiles(path) : [path];
  });
}

function logsHold(text: string): boolean {
  return logFiles().some((file) => readFileSync(file, "utf8").includes(text));
}

async function statusWith(url: string, token: string): Promise<number> {
  return (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status;
}

export const pairingCases: TestCase[] = [
  {
    name: "pairing | Connect a Device: a QR code and a #token= link whose token works; the token stays out of the log even with a verbose trace",
    needs: "browser",
    fn: async () => {
      const api = await extensionApi();
      const settings = vscode.workspace.getConfiguration("acpRemote");
      const trace = settings.inspect<string>("trace.server")?.workspaceValue;
      const logLevel = await vscode.commands.executeCommand<string>("_extensionTests.getLogLevel");
      // The verbose trace logs each message's params and result (at the trace log level): the pairing's result holds the token.
      await settings.update("trace.server", "verbose", vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand("_extensionTests.setLogLevel", "trace");
      try {
        const connecting = vscode.commands.executeCommand("acpRemote.connectDevice");
        await ui("inputBox", { text: LABEL });
        await connecting;
        const { text } = await ui<{ text: string }>("webviewText", { selector: "#pairing-link", contains: "#token=" });
        const link = text.trim();
        assert.match(link, /^https?:\/\/[^?]+\/#token=[A-Za-z0-9_-]{43}$/, "the token rides in the fragment, never in a query");
        const { count } = await ui<{ count: number }>("webviewCount", { frameSelector: "#pairing-link", selector: 'img#pairing-qr[src^="data:image/svg+xml;base64,"]' });
        assert.equal(count, 1, "the QR code is an SVG drawn in the extension host");
        const token = new URLSearchParams(link.slice(link.indexOf("#") + 1)).get("token")!;
        assert.notEqual(token, await api.token(), "the device has a token of its own");
        assert.equal(await statusWith(api.server!.url, token), 200);
        // The trace logs the messages about the device (the status pushed after its first use), and the token is not in them.
        await waitFor("the device in the traced status", () => logsHold(`"label": "${LABEL}"`));
        assert.equal(logsHold(token), false, "the device token is not in any log");
      } finally {
        await vscode.commands.executeCommand("_extensionTests.setLogLevel", logLevel);
        await settings.update("trace.server", trace, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "pairing | the device in the Overview with its last use; Revoke from its context menu: its token gets 401 at once, the main token still works",
    needs: "browser",
    fn: async () => {
      const api = await extensionApi();
      const device = await waitFor("the paired device used in the status", () => api.status?.devices.find((d) => d.label === LABEL && d.lastUsedAt !== undefined));
      await vscode.commands.executeCommand("acpRemote.focusView");
      // Devices is the tree's last group: its rows exist only once scrolled into view (the list is virtual).
      await vscode.commands.executeCommand("list.focusLast");
      await ui("treeText", { contains: LABEL });
      // The one device in the tree: its description says it was just used.
      await ui("treeText", { contains: "used just now" });
      const { text: link } = await ui<{ text: string }>("webviewText", { selector: "#pairing-link", contains: "#token=" });
      const token = new URLSearchParams(link.trim().slice(link.indexOf("#") + 1)).get("token")!;
      assert.equal(await statusWith(api.server!.url, token), 200);
      await clearNotifications();
      await ui("treeContextMenu", { item: LABEL, label: "Revoke Device" });
      await inNotificationCentre(() => ui("clickNotificationButton", { label: "Revoke" }));
      await waitFor("the device gone from the status", () => !api.status?.devices.some((d) => d.deviceId === device.deviceId));
      assert.equal(await statusWith(api.server!.url, token), 401);
      assert.equal(await statusWith(api.server!.url, await api.token()), 200);
    },
  },
  {
    name: "pairing | code-server's /proxy/PORT/: Connect a Device's link (asExternalUri) opens the web client under that prefix, and a prompt runs through the proxy",
    needs: "browser",
    fn: async () => {
      const api = await extensionApi();
      const connecting = vscode.commands.executeCommand("acpRemote.connectDevice");
      await ui("inputBox", { text: "Proxied phone" });
      await connecting;
      const { text } = await ui<{ text: string }>("webviewText", { selector: "#pairing-link", contains: "#token=" });
      const link = text.trim();
      const port = new URL(api.server!.url).port;
      assert.match(link, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/proxy/${port}/#token=`), "the editor's address of the server: code-server's proxy");
      const opened = await ui<{ url: string; text: string; profile: string }>("openWebClient", { link, prompt: "echo through the proxy", screenshot: "web-code-server-proxy" });
      assert.equal(opened.url, link.slice(0, link.indexOf("#")), "the page stays under the prefix, without the token");
      assert.match(opened.text, /through the proxy/);
      assert.equal(opened.profile, "websocket", "the WebSocket goes through code-server's proxy too");
    },
  },
];
