// Request and response as a route sees them: the HTTP/1.1 and HTTP/2
// compatibility objects share this surface, so one handler serves h2, h2c and
// HTTP/1.1 alike.
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { Http2ServerRequest } from "node:http2";

export type HttpRequest = IncomingMessage | Http2ServerRequest;

/** What a route may do with a response; `ServerResponse` and `Http2ServerResponse` both have it. */
export interface HttpResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  getHeader(name: string): unknown;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders): unknown;
  /** HTTP/1.1 only: sends the headers now (HTTP/2 sends them with writeHead). */
  flushHeaders?: () => void;
  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: string | Uint8Array, callback?: () => void): unknown;
  on(event: "close" | "drain" | "finish" | "error", listener: (...args: unknown[]) => void): unknown;
  once(event: "close" | "drain" | "finish" | "error", listener: (...args: unknown[]) => void): unknown;
  off(event: "close" | "drain" | "finish" | "error", listener: (...args: unknown[]) => void): unknown;
}

/** Handles requests under one path prefix (e.g. "/v1"). */
export interface Route {
  readonly prefix: string;
  /**
   * When present, decides alone which paths the route takes, instead of
   * everything under `prefix`: the web client at "/" claims its exact paths
   * and leaves the rest to the other routes and the 404.
   */
  matches?(path: string): boolean;
  handle(req: HttpRequest, res: HttpResponse): void;
  /**
   * Answers a request the front door refused before handing it over (an
   * Origin or Host it does not serve, an `Expect` it does not meet, a body
   * that did not arrive in time), in the route's own error format: the
   * client of a route reads only that route's errors.
   */
  refuse(req: HttpRequest, res: HttpResponse, refusal: FrontDoorRefusal): void;
  /** The route answers from the store: while the store cannot be reached, the front door answers 503 for it. */
  needsStore?: boolean;
}

/** Why the front door refused a request, for the route to answer. */
export type FrontDoorRefusal =
  /** 403: an Origin or Host the server does not serve. */
  | { status: 403; message: string }
  /** 408: the request's body did not all arrive within requestTimeoutMs (the listener then ends the request). */
  | { status: 408; message: string }
  /** 417: an `Expect` other than 100-continue. */
  | { status: 417; message: string }
  /** 503: the store cannot be reached now; try again after `retryAfterSeconds`. */
  | { status: 503; message: string; retryAfterSeconds: number };
