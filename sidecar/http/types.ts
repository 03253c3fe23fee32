// Request and response as a route sees them: the HTTP/1.1 and HTTP/2
// compatibility objects share this surface, so one handler serves h2, h2c and
// HTTP/1.1 alike.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

export type HttpRequest = IncomingMessage | Http2ServerRequest;
export type HttpResponse = ServerResponse | Http2ServerResponse;

/** Handles requests under one path prefix (e.g. "/v1"). */
export interface Route {
  readonly prefix: string;
  handle(req: HttpRequest, res: HttpResponse): void;
}
