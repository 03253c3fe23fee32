// The address a device opens: the server's URL as this editor's remote setup
// exposes it (asExternalUri follows forwarded ports), a LAN address when the
// server listens on every interface, and whether a phone can reach it at all.
// The decision is plain code (reachability.ts); this file asks the editor.
import * as vscode from "vscode";
import type { ServerInfo } from "../../protocol/control.ts";
import { reachability, withoutSlash, type PairingAddress } from "./reachability.ts";

export async function pairingAddress(server: ServerInfo): Promise<PairingAddress> {
  const external = (await vscode.env.asExternalUri(vscode.Uri.parse(withoutSlash(server.url)))).toString(true);
  return reachability(server, external);
}

/** The pairing link: the token rides in the fragment, which browsers never send to a server. */
export function pairingLink(baseUrl: string, token: string): string {
  return `${baseUrl}/#token=${encodeURIComponent(token)}`;
}
