// The headers every response of the web client carries. The page runs only
// its own script and style sheet, talks only to its own origin (fetch and
// WebSocket), and cannot be framed, so injected text has nothing to load or
// reach and no other site can dress the page up.
import type { HttpRequest } from "../http/types.ts";
import type { PublicUrls } from "../http/public-url.ts";

/** A Host header that is safe to echo into the policy: a name or address and a port, nothing else. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * `connect-src` lists the page's own WebSocket origin beside 'self': older
 * browsers do not count ws:/wss: of the same host as 'self'. Behind a proxy
 * that speaks TLS for the server, the page's origin is a public URL's, which
 * the Host header may not spell (no port, another scheme): each public URL's
 * WebSocket origin is listed too.
 */
function contentSecurityPolicy(req: HttpRequest, secure: boolean, publicUrls?: PublicUrls): string {
  const raw = req.headers[":authority"] ?? req.headers.host;
  const host = typeof raw === "string" && HOST.test(raw) ? raw : undefined;
  const sockets = new Set<string>();
  if (host !== undefined) sockets.add(`${secure ? "wss" : "ws"}://${host}`);
  for (const { origin } of publicUrls?.list() ?? []) sockets.add(origin.replace(/^http/, "ws"));
  const connect = ["'self'", ...sockets].join(" ");
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function securityHeaders(req: HttpRequest, secure: boolean, publicUrls?: PublicUrls): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(req, secure, publicUrls),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}
