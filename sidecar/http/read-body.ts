// Reads a request body up to a byte limit, for every route. Past the limit it
// stops reading and throws BodyTooLargeError: a client cannot make the server
// buffer more than `maxBytes`, whatever Content-Length it announces or omits.
// Each route turns the error into its own 413 (JSON-RPC on /acp, OpenAI's
// error shape on /v1), by handing its `BodyRefusals`. A request cut at its
// deadline (request-deadline.ts) rejects with RequestTimeoutError (or the
// route's own), never with the part of its body that came.
import { wasCutOff } from "./request-deadline.ts";
import type { HttpRequest } from "./types.ts";

export class BodyTooLargeError extends Error {
  /** The limit that was passed, in bytes. */
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The request body is larger than ${maxBytes} bytes.`);
    this.name = "BodyTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** The request was cut at its deadline before its body was all in; the listener has answered 408. */
export class RequestTimeoutError extends Error {
  constructor() {
    super("The request was not received in time.");
    this.name = "RequestTimeoutError";
  }
}

/** A route's own errors for a body past the limit and for one cut at its deadline, thrown in place of this file's. */
export interface BodyRefusals {
  tooLarge(maxBytes: number): Error;
  timedOut?(): Error;
}

/** Reads the body, at most `maxBytes`; with `refusals`, its refusals are the route's own errors. */
export function readBody(req: HttpRequest, maxBytes: number, refusals?: BodyRefusals): Promise<Buffer> {
  const read = readBounded(req, maxBytes);
  if (refusals === undefined) return read;
  return read.catch((error: unknown) => {
    if (error instanceof BodyTooLargeError) throw refusals.tooLarge(maxBytes);
    if (error instanceof RequestTimeoutError && refusals.timedOut !== undefined) throw refusals.timedOut();
    throw error;
  });
}

function readBounded(req: HttpRequest, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes));
  if (wasCutOff(req)) return Promise.reject(new RequestTimeoutError());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      // An HTTP/2 stream reset at the deadline ends its request like a finished one.
      if (wasCutOff(req)) {
        reject(new RequestTimeoutError());
        return;
      }
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onAborted = (): void => {
      cleanup();
      reject(new Error("request aborted"));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
