// The server's URL as a phone on the network opens it. A server bound to every
// interface (0.0.0.0, ::) reports a loopback URL, which a phone cannot open:
// the pairing link names this machine's network address instead. Used by the
// terminal's pairing banner and the editor's Connect a Device panel alike.
import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";

/** Bind addresses that mean "every interface". */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(["", "0.0.0.0", "::", "[::]"]);

export function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.has(host.trim());
}

/** This machine's first IPv4 address on a network (not loopback), or undefined. */
export function lanAddress(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string | undefined {
  for (const addresses of Object.values(interfaces)) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

/**
 * `url` (the server's base URL, no trailing slash) with a network address
 * when the server listens on every interface and this machine has one; `url`
 * itself otherwise.
 */
export function lanUrl(url: string, bindHost: string, interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]>): string {
  if (!isWildcardHost(bindHost)) return url;
  const address = lanAddress(interfaces);
  if (address === undefined) return url;
  const u = new URL(url);
  u.hostname = address;
  return u.toString().replace(/\/$/, "");
}
