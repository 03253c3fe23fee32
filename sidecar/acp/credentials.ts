// Who an /acp request speaks for, and which protocol version. Where an /acp
// request carries its bearer token (design: decision 8). Every
// request may use `Authorization: Bearer`; a WebSocket handshake may also use
// the subprotocol `acp.bearer.<token>` or the `access_token` query parameter,
// because browsers cannot set headers on a WebSocket.
import type { Authenticator } from "../server/http/auth.ts";
import { bearerToken } from "../server/http/auth.ts";
import type { HttpRequest } from "../server/http/types.ts";
import type { Principal } from "../hub/types.ts";
import { Errors } from "./errors.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import { AcpExt, Header, SUPPORTED_PROTOCOL_VERSIONS, TOKEN_QUERY_PARAM, WS_TOKEN_SUBPROTOCOL_PREFIX } from "../../protocol/acp.ts";

export function requestToken(req: HttpRequest, options: { websocket: boolean }): string | undefined {
  const fromHeader = bearerToken(req.headers[Header.Authorization]);
  if (fromHeader !== undefined || !options.websocket) return fromHeader;
  const offered = req.headers["sec-websocket-protocol"];
  const protocols = (Array.isArray(offered) ? offered.join(",") : (offered ?? "")).split(",").map((p) => p.trim());
  const fromProtocol = protocols.find((p) => p.startsWith(WS_TOKEN_SUBPROTOCOL_PREFIX));
  if (fromProtocol !== undefined) return fromProtocol.slice(WS_TOKEN_SUBPROTOCOL_PREFIX.length);
  const fromQuery = new URL(req.url ?? "/", "http://localhost").searchParams.get(TOKEN_QUERY_PARAM);
  return fromQuery ?? undefined;
}

/** The principal of an /acp request, or the 401 (with `WWW-Authenticate: Bearer`). */
export function authenticate(req: HttpRequest, auth: Authenticator, options: { websocket: boolean }): Principal {
  const token = requestToken(req, options);
  if (auth.isNodeKey(token)) return onBehalfOf(req);
  const principal = auth.authenticate(token);
  if (principal === undefined) throw Errors.unauthorized();
  return principal;
}

/**
 * The person a link from another node of the shared store speaks for: its
 * client's, named in a header that only the cluster's key makes believable.
 */
function onBehalfOf(req: HttpRequest): Principal {
  const raw = req.headers[AcpExt.onBehalfOfHeader];
  const value = Array.isArray(raw) ? raw[0] : raw;
  try {
    const parsed = JSON.parse(Buffer.from(value ?? "", "base64url").toString("utf8")) as unknown;
    if (isRecord(parsed) && typeof parsed["id"] === "string" && typeof parsed["label"] === "string") {
      const principal: { id: string; label: string; deviceId?: string } = { id: parsed["id"], label: parsed["label"] };
      if (typeof parsed["deviceId"] === "string") principal.deviceId = parsed["deviceId"];
      return principal;
    }
  } catch {
    // Answered below.
  }
  throw Errors.unauthorized();
}

/** Design, decision 9: `Acp-Protocol-Version` is optional; a version this server does not speak is a 400. */
export function checkProtocolVersion(req: HttpRequest): void {
  const value = req.headers[Header.ProtocolVersion];
  const version = Array.isArray(value) ? value[0] : value;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version.trim())) {
    throw Errors.unsupportedProtocolVersion(version);
  }
}
