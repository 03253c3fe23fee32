// Routing of /v1 requests: the key first (spec: Authentication), then the
// path and method to one handler. Errors are thrown; the route writes them
// (errors.ts only).
import type { HttpRequest, HttpResponse } from "../http/types.ts";
import type { Authenticator } from "../http/auth.ts";
import { bearerToken } from "../http/auth.ts";
import type { Principal } from "../hub/types.ts";
import { V1Path } from "../../protocol/v1.ts";
import { methodNotAllowed, unauthorized, unknownPath } from "./errors.ts";
import type { V1Context } from "./handlers/context.ts";
import { chatCompletions } from "./handlers/chat.ts";
import { deferredCompletion } from "./handlers/deferred.ts";
import { models } from "./handlers/models.ts";

function authenticate(auth: Authenticator, req: HttpRequest): Principal {
  const principal = auth.authenticate(bearerToken(req.headers.authorization));
  if (!principal) throw unauthorized();
  return principal;
}

/** A path segment, decoded; a malformed escape is a path /v1 does not have (404), not a 500. */
function segment(path: string, prefix: string): string {
  try {
    return decodeURIComponent(path.slice(prefix.length + 1));
  } catch {
    throw unknownPath(path);
  }
}

export async function dispatch(ctx: V1Context, auth: Authenticator, req: HttpRequest, res: HttpResponse): Promise<void> {
  const principal = authenticate(auth, req);
  const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
  if (path === V1Path.chatCompletions) {
    if (req.method !== "POST") throw methodNotAllowed(req.method ?? "", ["POST"]);
    return chatCompletions(ctx, req, res, principal);
  }
  if (path.startsWith(`${V1Path.deferredCompletion}/`)) {
    const id = segment(path, V1Path.deferredCompletion);
    if (id.length === 0 || id.includes("/")) throw unknownPath(path);
    return deferredCompletion(ctx, req, res, principal, id);
  }
  if (path === V1Path.models) return models(ctx, req, res, undefined);
  if (path.startsWith(`${V1Path.models}/`)) return models(ctx, req, res, segment(path, V1Path.models));
  throw unknownPath(path);
}
