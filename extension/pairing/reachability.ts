// Whether a phone can open the server, from what the server binds and what
// the editor made of its URL: a forwarded address is used as it is, a server
// on every interface is named by this machine's network address, and one on
// loopback that nothing forwards is this machine's only.
import type { NetworkInterfaceInfo } from "node:os";
import { isWildcardHost, lanUrl } from "../../common/lan-address.ts";
import { isLoopbackHost } from "../../common/loopback.ts";
import type { ServerInfo } from "../../protocol/control.ts";

export interface PairingAddress {
  /** Base URL without a trailing slash. */
  url: string;
  /** False when only this machine can reach it: bound to loopback and not forwarded. */
  reachable: boolean;
}

/** `externalUrl` is the server's URL after `vscode.env.asExternalUri`. */
export function reachability(server: Pick<ServerInfo, "url" | "host">, externalUrl: string, interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]>): PairingAddress {
  const own = withoutSlash(server.url);
  const external = withoutSlash(externalUrl);
  if (external !== own) return { url: external, reachable: true };
  if (isWildcardHost(server.host)) {
    const lan = lanUrl(own, server.host, interfaces);
    return { url: lan, reachable: lan !== own };
  }
  return { url: own, reachable: !isLoopbackHost(server.host) };
}

export function withoutSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
