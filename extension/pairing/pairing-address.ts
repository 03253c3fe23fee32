// The address a device opens: the server's URL as this editor's remote setup
// exposes it (asExternalUri follows forwarded ports), a LAN address when the
// server listens on every interface, and whether a phone can reach it at all.
import * as vscode from "vscode";
import { isWildcardHost, lanUrl } from "../../common/lan-address.ts";
import { isLoopbackHost } from "../../common/loopback.ts";
import type { ServerInfo } from "../../protocol/control.ts";

export interface PairingAddress {
  /** Base URL without a trailing slash. */
  url: string;
  /** False when only this machine can reach it: bound to loopback and not forwarded. */
  reachable: boolean;
}

export async function pairingAddress(server: ServerInfo): Promise<PairingAddress> {
  const own = withoutSlash(server.url);
  const external = withoutSlash((await vscode.env.asExternalUri(vscode.Uri.parse(own))).toString(true));
  if (external !== own) return { url: external, reachable: true };
  if (isWildcardHost(server.host)) {
    // The server's own URL names loopback: a network address, when this machine has one.
    const lan = lanUrl(own, server.host);
    return { url: lan, reachable: lan !== own };
  }
  return { url: own, reachable: !isLoopbackHost(server.host) };
}

/** The pairing link: the token rides in the fragment, which browsers never send to a server. */
export function pairingLink(baseUrl: string, token: string): string {
  return `${baseUrl}/#token=${encodeURIComponent(token)}`;
}

function withoutSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
