// The address a device opens: the server's public URL when it has one, else
// its URL as this editor's remote setup exposes it (asExternalUri follows
// forwarded ports, and code-server's /proxy/PORT/), a LAN address when the
// server listens on every interface, and whether a phone can reach it at all.
// A forwarded address is told to the sidecar, whose Host and Origin checks
// then let the phone in, so a Codespace, a Remote Tunnel or code-server work
// without a flag. The decision is plain code (reachability.ts); this file
// asks the editor.
import * as vscode from "vscode";
import type { ServerInfo } from "../../protocol/control.ts";
import { reachability, withoutSlash, type PairingAddress } from "./reachability.ts";

/** `accept` tells the sidecar to accept a forwarded address (acpRemote/server/addPublicUrl). */
export async function pairingAddress(server: ServerInfo, accept: (url: string) => Promise<unknown>): Promise<PairingAddress> {
  const external = (await vscode.env.asExternalUri(vscode.Uri.parse(withoutSlash(server.url)))).toString(true);
  const address = reachability(server, external);
  if (address.forwarded) await accept(address.url);
  return address;
}

/** The pairing link: the token rides in the fragment, which browsers never send to a server. */
export function pairingLink(baseUrl: string, token: string): string {
  return `${baseUrl}/#token=${encodeURIComponent(token)}`;
}
