// Where the page finds /acp: the server that served it, with the agent to talk
// to as the `agent` query parameter (the token never goes in a URL).
import { ACP_PATH } from "./wire.ts";

export interface Endpoint {
  /** The page's origin, e.g. `https://host:8765`. */
  origin: string;
  /** Bearer token; null when the server runs without authentication. */
  token: string | null;
  /** A configured agent's name; the server's default when absent. */
  agent?: string;
}

export function acpUrl(endpoint: Endpoint, scheme: "http" | "ws"): string {
  const url = new URL(ACP_PATH, endpoint.origin);
  if (scheme === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  if (endpoint.agent !== undefined) url.searchParams.set("agent", endpoint.agent);
  return url.href;
}

export function authHeaders(endpoint: Endpoint): Record<string, string> {
  return endpoint.token === null ? {} : { Authorization: `Bearer ${endpoint.token}` };
}
