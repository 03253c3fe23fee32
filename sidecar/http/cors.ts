// CORS for browser clients on an allowed origin (a web UI on another port or
// host, listed with --allow-origin). The Origin/Host policy runs first: only
// requests it let through get here. Streamable HTTP needs custom headers both
// ways (Authorization and Acp-* in, Acp-Connection-Id out), so a browser sends
// a preflight, which carries no credentials and is answered before auth.
import type { HttpRequest, HttpResponse } from "./types.ts";

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

const CORS_ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS";
/** Request headers allowed when the preflight does not list its own. */
const CORS_ALLOWED_HEADERS = "authorization, content-type, accept, acp-connection-id, acp-session-id, acp-protocol-version";
/** Response headers a page may read. */
const CORS_EXPOSED_HEADERS = "acp-connection-id, retry-after, www-authenticate";

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Adds the CORS headers for a request with an (allowed) Origin. Answers a
 * preflight itself and returns true; false means the request goes on.
 */
export function applyCors(req: HttpRequest, res: HttpResponse): boolean {
  const origin = first(req.headers.origin);
  if (origin === undefined) return false;
  res.setHeader("access-control-allow-origin", origin);
  res.setHeader("access-control-allow-credentials", "true");
  res.setHeader("vary", "Origin");
  const requestedMethod = first(req.headers["access-control-request-method"]);
  if (req.method !== "OPTIONS" || requestedMethod === undefined) {
    res.setHeader("access-control-expose-headers", CORS_EXPOSED_HEADERS);
    return false;
  }
  // The origin is allowed, so the headers it asks for are too.
  const requestedHeaders = first(req.headers["access-control-request-headers"]);
  res.writeHead(204, {
    "access-control-allow-methods": CORS_ALLOWED_METHODS,
    "access-control-allow-headers": requestedHeaders ?? CORS_ALLOWED_HEADERS,
    "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
    "content-length": "0",
  });
  res.end();
  return true;
}
