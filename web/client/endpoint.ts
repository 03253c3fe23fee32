// Where the page finds /acp: the server that served it, with the agent to talk
// to as the `agent` query parameter (the token never goes in a URL).
//
// The page's base, in one place: the folder the page was served from, e.g.
// `https://box.example/acp-remote/` behind a proxy under a path prefix, or
// `https://box.example/` at the root. Every address the page makes (the
// /acp endpoint, its WebSocket, the page's own JSON endpoint) is that base
// plus the server's path, through `underBase`; nothing names "/" itself, so
// the page works under any prefix, whether the proxy strips it or passes it
// on (docs/remote-access.md). index.html and the manifest link their files
// relatively for the same reason. A service worker registered as `./sw.js`
// with scope `./` follows the prefix too; inside it, `registration.scope` is
// this same base.
import { ACP_PATH } from "./wire.ts";

export interface Endpoint {
  /** The page's base (`pageBase()`), e.g. `https://box.example/acp-remote/`. */
  base: string;
  /** Bearer token; null when the server runs without authentication. */
  token: string | null;
  /** A configured agent's name; the server's default when absent. */
  agent?: string;
}

/** The folder the page was served from, with its trailing slash (the location's fragment and query dropped). */
export function pageBase(href: string = document.baseURI): string {
  return new URL("./", href).href;
}

/** A server path (`/acp`, `/app/agents`) under the page's base: `https://box.example/acp-remote/acp`. */
export function underBase(base: string, path: string): URL {
  return new URL(`.${path}`, base);
}

export function acpUrl(endpoint: Endpoint, scheme: "http" | "ws"): string {
  const url = underBase(endpoint.base, ACP_PATH);
  if (scheme === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  if (endpoint.agent !== undefined) url.searchParams.set("agent", endpoint.agent);
  return url.href;
}

export function authHeaders(endpoint: Endpoint): Record<string, string> {
  return endpoint.token === null ? {} : { Authorization: `Bearer ${endpoint.token}` };
}
