// Whether a phone can open the server, from what the server binds and what
// the editor made of its URL: a public URL the server was given is the
// address people use; a forwarded address (a Codespace, a Remote Tunnel,
// code-server's /proxy/PORT/) is used as it is, and the sidecar must be told
// to accept it; a server on every interface is named by this machine's
// network address, and one on loopback that nothing forwards is this
// machine's only.
import type { NetworkInterfaceInfo } from "node:os";
import { isWildcardHost, lanUrl } from "../../common/lan-address.ts";
import { isLoopbackHost } from "../../common/loopback.ts";
import type { ServerInfo } from "../../protocol/control.ts";

export interface PairingAddress {
  /** Base URL without a trailing slash. */
  url: string;
  /** False when only this machine can reach it: bound to loopback and not forwarded. */
  reachable: boolean;
  /** The editor's forwarding of the server's URL (asExternalUri): the sidecar accepts it only once told (acpRemote/server/addPublicUrl). */
  forwarded: boolean;
}

/** `externalUrl` is the server's URL after `vscode.env.asExternalUri`. */
export function reachability(
  server: Pick<ServerInfo, "url" | "host" | "publicUrls">,
  externalUrl: string,
  interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]>,
): PairingAddress {
  const configured = server.publicUrls?.[0];
  if (configured !== undefined) return { url: withoutSlash(configured), reachable: true, forwarded: false };
  const own = withoutSlash(server.url);
  const external = withoutSlash(externalUrl);
  if (external !== own) return { url: external, reachable: true, forwarded: true };
  if (isWildcardHost(server.host)) {
    const lan = lanUrl(own, server.host, interfaces);
    return { url: lan, reachable: lan !== own, forwarded: false };
  }
  return { url: own, reachable: !isLoopbackHost(server.host), forwarded: false };
}

export function withoutSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
