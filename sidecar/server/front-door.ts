// The HTTP front of the sidecar: one port (h2 over TLS, h2c, HTTP/1.1 and the
// WebSocket upgrade), the Origin/Host check in front of everything, CORS for
// the origins it allows, then routing: /acp to the remote transport, each Route to its prefix, and a JSON
// 404 for anything else. A request a proxy passed on under a public URL's
// path prefix is routed as the same request without it.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { AcpTransport } from "../acp/transport.ts";
import { Errors, rejectUpgrade, sendError } from "../acp/errors.ts";
import type { TransportError } from "../acp/errors.ts";
import { ACP_PATH } from "../../protocol/acp.ts";
import type { Authenticator } from "../http/auth.ts";
import { applyCors } from "../http/cors.ts";
import { listen } from "../http/listener.ts";
import type { ParserRefusal } from "../http/listener.ts";
import { OriginPolicy } from "../http/origin.ts";
import { type LocalTarget, PublicUrls } from "../http/public-url.ts";
import type { HttpRequest, HttpResponse, Route } from "../http/types.ts";
import type { ConnectionHub } from "../hub/types.ts";
import { resolveLimits } from "../http/server-limits.ts";
import type { ServerLimits } from "../http/server-limits.ts";

export interface CreateServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  tls?: { cert: string | Buffer; key: string | Buffer };
  auth: Authenticator;
  hub: ConnectionHub;
  routes: Route[];
  /** Why the store cannot be reached now, or undefined while it can: /acp and the routes that need it answer 503. */
  storeDown?: () => { message: string; retryAfterSeconds: number } | undefined;
  /** Origins allowed besides the server's own and, on loopback, loopback origins. */
  allowedOrigins?: string[];
  /**
   * The addresses people use through a proxy or tunnel (`--public-url`, the
   * editor's asExternalUri): their Origin and Host are let in, their path
   * prefix is taken off. Ones added while the server runs count at once.
   */
  publicUrls?: PublicUrls;
  limits?: Partial<ServerLimits>;
  log?: (line: string) => void;
}

export interface RunningHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:8765` (the /acp endpoint is `${url}/acp`). */
  readonly url: string;
  readonly port: number;
  /** Ends the /acp connections made with a revoked device's token (they detach; the person's sessions stay). */
  dropDevice(deviceId: string): void;
  /** Stops accepting connections while the open ones go on (a drain before close). */
  stopAccepting(): void;
  /** Ends streams (SSE ends, WebSockets close with 1001), detaches every connection, stops listening. */
  close(): Promise<void>;
}

/** `GET /acp-remote` (the prefix without its slash): where the page is, so that its relative links resolve under the prefix. */
const PAGE_REDIRECT_STATUS = 308;

/** The path of a request target, without query. */
function pathOf(url: string | undefined): string {
  const target = url ?? "/";
  const q = target.indexOf("?");
  return q === -1 ? target : target.slice(0, q);
}

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The host part of a URL for a bind address (wildcards become loopback, IPv6 gets brackets). */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** What node:http refused before there was a request to route, as /acp answers it (there is no route to ask). */
const PARSER_REFUSALS: Record<ParserRefusal, () => TransportError> = {
  400: Errors.malformedRequest,
  408: Errors.requestTimeout,
  413: Errors.chunkExtensionsTooLarge,
  431: Errors.headersTooLarge,
};

export async function createServer(options: CreateServerOptions): Promise<RunningHttpServer> {
  const limits = resolveLimits(options.limits);
  const secure = options.tls !== undefined;
  const publicUrls = options.publicUrls ?? new PublicUrls();
  const origins = new OriginPolicy({ bindHost: options.host, secure, allowedOrigins: options.allowedOrigins ?? [], publicUrls });
  const transport = new AcpTransport({ hub: options.hub, auth: options.auth, limits, secure, log: options.log });
  const routes = [...options.routes];

  /** The route that answers `path` in its own format; undefined for /acp and unknown paths, which answer in JSON-RPC. */
  const routeOf = (path: string): Route | undefined =>
    path === ACP_PATH ? undefined : routes.find((r) => (r.matches ? r.matches(path) : underPrefix(path, r.prefix)));

  // A prefix that is itself a path of the server would make a request mean
  // two things (with the prefix kept or stripped): such a public URL is refused.
  publicUrls.guard(({ prefix }) =>
    prefix !== "" && (underPrefix(prefix, ACP_PATH) || routeOf(prefix) !== undefined)
      ? `its path ${prefix} is one the server answers itself; choose another, e.g. /acp-remote`
      : undefined,
  );

  /**
   * The target under a public URL's prefix, without it; undefined when no
   * prefix applies, or when the path is one the server answers as it is (a
   * proxy that strips the prefix sent it).
   */
  const localTarget = (target: string): LocalTarget | undefined => {
    const path = pathOf(target);
    return path === ACP_PATH || routeOf(path) !== undefined ? undefined : publicUrls.local(target);
  };

  /**
   * Takes a public URL's prefix off the request's target, so routes see the
   * path they serve. The prefix alone is returned, for a redirect: the page is
   * one slash further, where its relative links resolve under the prefix.
   */
  const unprefix = (req: HttpRequest): LocalTarget | undefined => {
    const local = localTarget(req.url ?? "/");
    if (local === undefined) return undefined;
    if (local.target === "" || local.target.startsWith("?")) return local;
    req.url = local.target;
    return undefined;
  };

  /** Refuses a request the listener stopped before routing, in the format of the route it was for. */
  const refuseEarly = (req: HttpRequest, res: HttpResponse, status: 408 | 417, error: TransportError): void => {
    try {
      const route = routeOf(pathOf(localTarget(req.url ?? "/")?.target ?? req.url));
      if (route === undefined) sendError(res, error);
      else route.refuse(req, res, { status, message: error.message });
    } catch (thrown) {
      sendError(res, thrown);
    }
  };

  const request = (req: HttpRequest, res: HttpResponse): void => {
    try {
      const bare = unprefix(req);
      const path = pathOf(req.url);
      const route = routeOf(path);
      const refusal = origins.refusal(req);
      if (refusal !== undefined) {
        if (route === undefined) throw Errors.forbidden(refusal);
        req.resume();
        route.refuse(req, res, { status: 403, message: refusal });
        return;
      }
      if (applyCors(req, res)) return;
      if (bare !== undefined) {
        req.resume();
        if (req.method !== "GET" && req.method !== "HEAD") throw Errors.notFound(bare.prefix);
        res.writeHead(PAGE_REDIRECT_STATUS, { location: `${bare.prefix}/${bare.target}`, "content-length": "0" });
        res.end();
        return;
      }
      const down = path === ACP_PATH || route?.needsStore ? options.storeDown?.() : undefined;
      if (down !== undefined) {
        req.resume();
        if (route === undefined) throw Errors.storeUnavailable(down.message, down.retryAfterSeconds);
        route.refuse(req, res, { status: 503, ...down });
        return;
      }
      if (path === ACP_PATH) {
        transport.handleRequest(req, res);
        return;
      }
      if (route === undefined) throw Errors.notFound(path);
      route.handle(req, res);
    } catch (error) {
      sendError(res, error);
    }
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    try {
      const refusal = origins.refusal(req);
      if (refusal !== undefined) throw Errors.forbidden(refusal);
      unprefix(req);
      const path = pathOf(req.url);
      if (path !== ACP_PATH) throw Errors.notFound(path);
      const down = options.storeDown?.();
      if (down !== undefined) throw Errors.storeUnavailable(down.message, down.retryAfterSeconds);
      transport.handleUpgrade(req, socket, head);
    } catch (error) {
      rejectUpgrade(socket, error);
    }
  };

  const listener = await listen({
    host: options.host,
    port: options.port,
    limits,
    handlers: {
      request,
      upgrade,
      expectationFailed: (req, res) => {
        req.resume();
        refuseEarly(req, res, 417, Errors.expectationFailed());
      },
      requestTimeout: (req, res) => refuseEarly(req, res, 408, Errors.requestTimeout()),
      parserRefusal: (socket, status) => rejectUpgrade(socket, PARSER_REFUSALS[status]()),
    },
    ...(options.tls !== undefined ? { tls: options.tls } : {}),
  });

  let closing: Promise<void> | undefined;
  return {
    url: `${secure ? "https" : "http"}://${urlHost(options.host)}:${listener.port}`,
    port: listener.port,
    dropDevice: (deviceId) => transport.dropDevice(deviceId),
    stopAccepting: () => listener.stopAccepting(),
    close: () => {
      closing ??= (async () => {
        // On shutdown connections detach, so sessions stay loadable after a restart.
        transport.close();
        await listener.close();
      })();
      return closing;
    },
  };
}
