// GET /v1/models and /v1/models/{id}: the agents (owned_by "acp-remote") and
// the upstream provider's models.
import type { HttpRequest, HttpResponse } from "../../http/types.ts";
import { ObjectType } from "../../../protocol/v1.ts";
import { methodNotAllowed, unknownModel } from "../errors.ts";
import { sendJson } from "../respond.ts";
import type { V1Context } from "./context.ts";

export async function models(ctx: V1Context, req: HttpRequest, res: HttpResponse, id: string | undefined): Promise<void> {
  if (req.method !== "GET") throw methodNotAllowed(req.method ?? "", ["GET"]);
  const all = await ctx.listModels();
  if (id === undefined) return sendJson(res, 200, { object: ObjectType.list, data: all });
  const model = all.find((m) => m.id === id);
  if (!model) throw unknownModel(id);
  return sendJson(res, 200, model);
}
