// The deadline for receiving a request (requestTimeoutMs). HTTP/1.1 has it
// from node:http (`requestTimeout`, answered through the server's
// 'clientError'); HTTP/2 has nothing of the kind, so every stream whose request
// still has a body to come gets a timer here. Only the request is bounded: a
// stream whose client has sent everything (a GET, a POST whose body is in) can
// answer for as long as it likes. A request cut at its deadline is remembered,
// so that a body reader does not take the part that arrived for the whole.
import http2 from "node:http2";
import type { Http2ServerRequest } from "node:http2";
import type { HttpRequest, HttpResponse } from "./types.ts";

const cutOff = new WeakSet<HttpRequest>();

/** The request was cut at its deadline: what was read of its body is not all of it. */
export function wasCutOff(req: HttpRequest): boolean {
  return cutOff.has(req);
}

/** Records that `req` is cut at its deadline (the caller answers and ends it). */
export function markCutOff(req: HttpRequest): void {
  cutOff.add(req);
}

/**
 * Gives an HTTP/2 request whose body is still to come `timeoutMs` to finish
 * it. Past that, `answer` answers 408 (unless an answer has started) and the
 * stream is reset: with NO_ERROR after a complete answer, which asks the client
 * to stop sending (RFC 9113, 8.1), else with CANCEL.
 */
export function watchHttp2Body(
  req: Http2ServerRequest,
  res: HttpResponse,
  timeoutMs: number,
  answer: (req: HttpRequest, res: HttpResponse) => void,
): void {
  const stream = req.stream;
  if (stream.endAfterHeaders) return;
  const timer = setTimeout(() => {
    // remoteClose: the client ended its side, the whole body is in.
    if (stream.destroyed || stream.state.remoteClose === 1) return;
    cutOff.add(req);
    if (!res.headersSent) answer(req, res);
    stream.close(res.writableEnded ? http2.constants.NGHTTP2_NO_ERROR : http2.constants.NGHTTP2_CANCEL);
  }, timeoutMs);
  timer.unref();
  stream.once("close", () => clearTimeout(timer));
}
