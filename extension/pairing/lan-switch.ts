// A server bound to loopback cannot be reached from a phone: this switches it
// to every interface over HTTPS (a self-signed certificate kept in the data
// folder), once the person agreed, and restarts it. Paired devices stay paired:
// they live in the server's store, not in the listener.
import * as vscode from "vscode";
import { SECTION } from "../config.ts";
import type { Ctx } from "../ctx.ts";

/** The bind address that listens on every IPv4 interface. */
const LAN_HOST = "0.0.0.0";

/** True when the server was switched and restarted. */
export async function switchToLanAndTls(ctx: Ctx): Promise<boolean> {
  const use = "Use LAN + TLS";
  const choice = await vscode.window.showWarningMessage(
    "Let devices on your network reach the server?",
    {
      modal: true,
      detail: `It will listen on every address (${SECTION}.server.host = ${LAN_HOST}) over HTTPS with a self-signed certificate (${SECTION}.server.tls = true), and restart. Every request still needs a token.`,
    },
    use,
  );
  if (choice !== use) return false;
  const config = vscode.workspace.getConfiguration(SECTION);
  // The workspace's settings when there is a workspace (as the port fix does), the person's otherwise.
  const target = vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update("server.host", LAN_HOST, target);
  await config.update("server.tls", true, target);
  await ctx.restart();
  return ctx.isRunning;
}
