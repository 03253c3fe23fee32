// The request body of /acp: the shared bounded reader, its 413 and 408 as /acp's JSON-RPC errors.
import type { HttpRequest } from "../http/types.ts";
import { BodyTooLargeError, readBody as readBounded, RequestTimeoutError } from "../http/read-body.ts";
import { Errors } from "./errors.ts";

export function readBody(req: HttpRequest, maxBytes: number): Promise<Buffer> {
  return readBounded(req, maxBytes).catch((error: unknown) => {
    if (error instanceof BodyTooLargeError) throw Errors.payloadTooLarge(maxBytes);
    throw error instanceof RequestTimeoutError ? Errors.requestTimeout() : error;
  });
}
