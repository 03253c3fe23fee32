// POST /v1/chat/completions: deferred → {request_id}; plain → chat.completion;
// stream → SSE (design: Deferred completions, decision 5).
import type { HttpRequest, HttpResponse } from "../../http/types.ts";
import type { Principal } from "../../hub/types.ts";
import type { ChatCompletion, DeferredSubmission } from "../../../protocol/v1.ts";
import { rateLimited, toV1Error, unknownModel } from "../errors.ts";
import { readJsonBody } from "../read-body.ts";
import { sendJson } from "../respond.ts";
import { validateChatRequest } from "../validate.ts";
import { TooManyJobsError } from "../jobs.ts";
import { EventStream } from "../sse.ts";
import { newCompletionId, unixSeconds } from "../completion.ts";
import type { V1Context } from "./context.ts";

/** An AbortSignal that fires when the client goes away before the response is complete. */
function clientGone(res: HttpResponse): AbortSignal {
  const controller = new AbortController();
  // Not "finish": HTTP/2 compatibility responses emit it (then "close") when the client resets the stream.
  res.on("close", () => {
    if (!res.writableEnded) controller.abort(new Error("the client closed the request"));
  });
  return controller.signal;
}

/** Spec: Limits 3; deferred and plain requests share one bucket per key. */
async function checkRate(ctx: V1Context, principal: Principal): Promise<void> {
  const decision = await ctx.rate.take(principal.id, ctx.limits.ratePerMinute);
  if (!decision.allowed) {
    throw rateLimited(`Rate limit of ${ctx.limits.ratePerMinute} chat completion requests per minute reached.`, decision.retryAfterSeconds);
  }
}

export async function chatCompletions(ctx: V1Context, req: HttpRequest, res: HttpResponse, principal: Principal): Promise<void> {
  const { limits, slots, jobs } = ctx;
  await checkRate(ctx, principal);
  const request = validateChatRequest(await readJsonBody(req, limits.maxBodyBytes));
  const key = await ctx.resolve(request.model);
  if (request.deferred) {
    let id: string;
    try {
      id = await jobs.submit(principal.id, key, request.model, request);
    } catch (error) {
      if (error instanceof TooManyJobsError) throw rateLimited(error.message, 60);
      throw error;
    }
    const body: DeferredSubmission = { request_id: id };
    return sendJson(res, 200, body);
  }
  const backend = ctx.backendOf(key);
  if (!backend) throw unknownModel(request.model);
  const signal = clientGone(res);
  await slots.acquire(key, signal);
  let stream: EventStream | undefined;
  try {
    const run = { id: newCompletionId(), created: unixSeconds(ctx.clock()), owner: principal.id, signal };
    if (!request.stream) {
      const completion: ChatCompletion = await backend.complete(request, run);
      return sendJson(res, 200, completion);
    }
    // The stream opens (200) with the first chunk: a backend that fails before it answers with its own status.
    const open = (): EventStream =>
      (stream ??= new EventStream(res, {
        maxQueuedChunks: limits.streamMaxQueuedChunks,
        maxQueuedBytes: limits.streamMaxQueuedBytes,
        drainTimeoutMs: limits.streamDrainTimeoutMs,
        keepAliveMs: limits.keepAliveMs,
      }));
    try {
      await backend.complete(request, { ...run, onChunk: (chunk) => open().send(chunk) });
    } catch (error) {
      if (signal.aborted || !stream) throw error;
      stream.error(toV1Error(error).body());
    }
  } finally {
    // The backend is done: its slot is free even while a slow client still reads the end of the stream.
    slots.release(key);
  }
  await stream?.end();
}
