// The address a device opens: the server's URL as this editor's remote setup
// exposes it (asExternalUri follows forwarded ports), a LAN address when the
// server listens on every interface, and whether a phone can reach it at all.
import { networkInterfaces } from "node:os";
import * as vscode from "vscode";
import { isLoopbackHost } from "../../common/loopback.ts";
import type { ServerInfo } from "../../protocol/control.ts";

export interface PairingAddress {
  /** Base URL without a trailing slash. */
  url: string;
  /** False when only this machine can reach it: bound to loopback and not forwarded. */
  reachable: boolean;
}

/** Bind addresses that mean "every interface": the server's own URL then names loopback. */
const WILDCARD_HOSTS = new Set(["", "0.0.0.0", "::", "[::]"]);

export async function pairingAddress(server: ServerInfo): Promise<PairingAddress> {
  const own = withoutSlash(server.url);
  const external = withoutSlash((await vscode.env.asExternalUri(vscode.Uri.parse(own))).toString(true));
  if (external !== own) return { url: external, reachable: true };
  if (WILDCARD_HOSTS.has(server.host)) {
    const lan = lanAddress();
    return lan === undefined ? { url: own, reachable: false } : { url: withHost(own, lan), reachable: true };
  }
  return { url: own, reachable: !isLoopbackHost(server.host) };
}

/** The pairing link: the token rides in the fragment, which browsers never send to a server. */
export function pairingLink(baseUrl: string, token: string): string {
  return `${baseUrl}/#token=${encodeURIComponent(token)}`;
}

/** This machine's first IPv4 address on a network (not loopback), as a phone on that network sees it. */
function lanAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

function withHost(url: string, host: string): string {
  const u = new URL(url);
  u.hostname = host;
  return withoutSlash(u.toString());
}

function withoutSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
