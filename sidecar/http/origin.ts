// Origin and Host checks in front of routing, on by default (design: decision
// 8). A browser page may reach a server on loopback; it must not be able to
// talk to it. So: a request whose `Origin` is not allowed is refused (403),
// and, when bound to loopback, so is a `Host` that is not a loopback name,
// which is what a DNS-rebinding page sends. Behind a proxy or tunnel, the
// public URLs the server was given add their Origin and their Host name, and
// nothing more (sidecar/server/public-url.ts).
import { isLoopbackHost } from "../../common/loopback.ts";
import type { PublicUrls } from "./public-url.ts";
import type { HttpRequest } from "./types.ts";

/** The hostname of a Host / :authority value (`name:port`, `[v6]:port`). */
function hostnameOf(authority: string): string {
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    return end === -1 ? authority : authority.slice(0, end + 1);
  }
  const colon = authority.indexOf(":");
  return colon === -1 ? authority : authority.slice(0, colon);
}

function normalizeOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

function normalizeAuthority(scheme: string, authority: string): string | undefined {
  try {
    return new URL(`${scheme}//${authority}`).host;
  } catch {
    return undefined;
  }
}

export interface OriginPolicyOptions {
  /** The address the server is bound to. */
  bindHost: string;
  /** Served over TLS (the server's own origin is https). */
  secure: boolean;
  /** Origins allowed besides the server's own and, on loopback, loopback origins. */
  allowedOrigins?: readonly string[];
  /** The addresses people use through a proxy or tunnel: their Origins, and their Host names on a loopback bind. Read at each request, as the editor may add one. */
  publicUrls?: PublicUrls;
}

export class OriginPolicy {
  readonly #loopbackOnly: boolean;
  readonly #scheme: string;
  readonly #allowed: ReadonlySet<string>;
  readonly #publicUrls: PublicUrls | undefined;

  constructor(options: OriginPolicyOptions) {
    this.#loopbackOnly = isLoopbackHost(options.bindHost);
    this.#scheme = options.secure ? "https:" : "http:";
    this.#publicUrls = options.publicUrls;
    this.#allowed = new Set(
      (options.allowedOrigins ?? []).map((o) => normalizeOrigin(o)).filter((o): o is string => o !== undefined),
    );
  }

  /** Why the request is refused (403), or undefined when it may go on. */
  refusal(req: HttpRequest): string | undefined {
    const authority = req.headers.host ?? req.headers[":authority"];
    const host = Array.isArray(authority) ? authority[0] : authority;
    if (this.#loopbackOnly && host !== undefined && !isLoopbackHost(hostnameOf(host)) && this.#publicUrls?.hasHostname(hostnameOf(host)) !== true) {
      return `Host ${JSON.stringify(host)} is neither a loopback name nor the host of a public URL`;
    }
    const rawOrigin = req.headers.origin;
    if (rawOrigin === undefined) return undefined;
    const origin = normalizeOrigin(rawOrigin);
    if (origin === undefined) return `Origin ${JSON.stringify(rawOrigin)} is not allowed`;
    if (this.#allowed.has(origin) || this.#publicUrls?.hasOrigin(origin) === true) return undefined;
    const url = new URL(origin);
    // The server's own origin: the scheme it serves and the authority the client addressed.
    if (host !== undefined && url.protocol === this.#scheme && url.host === normalizeAuthority(this.#scheme, host)) {
      return undefined;
    }
    if (this.#loopbackOnly && isLoopbackHost(url.hostname)) return undefined;
    return `Origin ${JSON.stringify(rawOrigin)} is not allowed`;
  }
}
