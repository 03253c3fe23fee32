// The one rule for "this host name or address is this machine's loopback"
// (RFC 6761 section 6.3 for names): `localhost` and any name under
// `.localhost`, the IPv4 block 127.0.0.0/8 and the IPv6 address ::1, in any
// spelling (upper case, a trailing root dot, IPv6 with or without brackets,
// ::1 written out in full). The sidecar decides with it whether `--no-auth` may
// be used and which Host and Origin names a loopback-bound server accepts; the
// extension decides with it whether to trust the sidecar's self-signed
// certificate. One rule, so the three can never disagree.
import { isIP } from "node:net";

/** True for `localhost`, `*.localhost`, 127.0.0.0/8 and ::1 (a bare host: no port, no scheme). */
export function isLoopbackHost(host: string): boolean {
  let name = host.trim().toLowerCase();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  if (isIP(name) === 6) return canonicalIpv6(name) === "[::1]";
  // A fully qualified name may end in the root's dot; an address may not.
  if (name.endsWith(".") && !name.endsWith("..")) name = name.slice(0, -1);
  if (isIP(name) === 4) return name.split(".")[0] === "127";
  return name === "localhost" || (name.endsWith(".localhost") && !name.startsWith("."));
}

/** The WHATWG URL spelling of an IPv6 address (`0:0:0:0:0:0:0:1` becomes `[::1]`). */
function canonicalIpv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname;
  } catch {
    // A zone id (`::1%lo`) is a valid address for isIP but not in a URL: not the plain ::1.
    return undefined;
  }
}
