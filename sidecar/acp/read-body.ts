// The request body of /acp: the shared bounded reader, its 413 as /acp's JSON-RPC error.
import type { HttpRequest } from "../server/http/types.ts";
import { BodyTooLargeError, readBody as readBounded } from "../server/http/read-body.ts";
import { Errors } from "./errors.ts";

export function readBody(req: HttpRequest, maxBytes: number): Promise<Buffer> {
  return readBounded(req, maxBytes).catch((error: unknown) => {
    throw error instanceof BodyTooLargeError ? Errors.payloadTooLarge(maxBytes) : error;
  });
}
