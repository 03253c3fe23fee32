// GET and DELETE /v1/chat/deferred-completion/{id}: 202 while pending, the
// result (or the failure) once, then 404; DELETE cancels and discards a job.
import type { HttpRequest, HttpResponse } from "../../http/types.ts";
import type { Principal } from "../../hub/types.ts";
import { ObjectType } from "../../../protocol/v1.ts";
import { methodNotAllowed, sendStoredError, unknownRequestId, type ErrorBody } from "../errors.ts";
import { sendJson, writeHead } from "../respond.ts";
import type { V1Context } from "./context.ts";

export async function deferredCompletion(ctx: V1Context, req: HttpRequest, res: HttpResponse, principal: Principal, id: string): Promise<void> {
  const { jobs } = ctx;
  if (req.method === "GET") {
    const got = await jobs.take(principal.id, id);
    if (got.kind === "gone") throw unknownRequestId(id);
    if (got.kind === "pending") {
      // Spec: "202: result not ready; empty body".
      writeHead(res, 202, { "content-length": 0 });
      return void res.end();
    }
    if (got.status === 200) return sendJson(res, 200, got.body);
    // Design: decision 2, a failed job answers once with its status and error body.
    return sendStoredError(res, got.status, got.body as ErrorBody);
  }
  if (req.method === "DELETE") {
    if (!(await jobs.cancel(principal.id, id))) throw unknownRequestId(id);
    return sendJson(res, 200, { request_id: id, object: ObjectType.deferredDeleted, deleted: true });
  }
  throw methodNotAllowed(req.method ?? "", ["GET", "DELETE"]);
}
