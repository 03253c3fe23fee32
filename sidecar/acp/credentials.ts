// Who an /acp request speaks for, and which protocol version. Where an /acp
// request carries its bearer token (design: decision 8). Every
// request may use `Authorization: Bearer`; a WebSocket handshake may also use
// the subprotocol `acp.bearer.<token>` or the `access_token` query parameter,
// because browsers cannot set headers on a WebSocket.
import type { Authenticator } from "../http/auth.ts";
import { bearerToken } from "../http/auth.ts";
import type { HttpRequest } from "../http/types.ts";
import type { Principal } from "../hub/types.ts";
import { Errors } from "./errors.ts";
import { AcpExt, Header, SUPPORTED_PROTOCOL_VERSIONS, TOKEN_QUERY_PARAM, WS_TOKEN_SUBPROTOCOL_PREFIX } from "../../protocol/acp.ts";

function requestToken(req: HttpRequest, options: { websocket: boolean }): string | undefined {
  const fromHeader = bearerToken(req.headers[Header.Authorization]);
  if (fromHeader !== undefined || !options.websocket) return fromHeader;
  const offered = req.headers["sec-websocket-protocol"];
  const protocols = (Array.isArray(offered) ? offered.join(",") : (offered ?? "")).split(",").map((p) => p.trim());
  const fromProtocol = protocols.find((p) => p.startsWith(WS_TOKEN_SUBPROTOCOL_PREFIX));
  if (fromProtocol !== undefined) return fromProtocol.slice(WS_TOKEN_SUBPROTOCOL_PREFIX.length);
  const fromQuery = new URL(req.url ?? "/", "http://localhost").searchParams.get(TOKEN_QUERY_PARAM);
  return fromQuery ?? undefined;
}

/**
 * The principal of an /acp request, or the 401 (with `WWW-Authenticate: Bearer`).
 * A request that names a person in `acp-remote-on-behalf-of` is a link from
 * another node of the shared store: it stands or falls by that claim alone,
 * signed with the node secret (sidecar/cluster/node-claim.ts), whatever token
 * comes with it.
 */
export function authenticate(req: HttpRequest, auth: Authenticator, options: { websocket: boolean }): Principal {
  const raw = req.headers[AcpExt.onBehalfOfHeader];
  if (raw !== undefined) {
    const claim = Array.isArray(raw) ? undefined : raw;
    const principal = claim === undefined ? undefined : auth.nodeClaim(claim);
    if (principal === undefined) throw Errors.unauthorized();
    return principal;
  }
  const principal = auth.authenticate(requestToken(req, options));
  if (principal === undefined) throw Errors.unauthorized();
  return principal;
}

/** Design, decision 9: `Acp-Protocol-Version` is optional; a version this server does not speak is a 400. */
export function checkProtocolVersion(req: HttpRequest): void {
  const value = req.headers[Header.ProtocolVersion];
  const version = Array.isArray(value) ? value[0] : value;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version.trim())) {
    throw Errors.unsupportedProtocolVersion(version);
  }
}
