// The web client at `/` (docs/web-client.md): the built page and its assets,
// GET and HEAD, each with its cache rule (hashed names immutable, the rest
// revalidated by ETag), and the page's one JSON endpoint, the configured
// agents, behind the same bearer token as /acp. Every answer carries the
// page's security headers. The route claims exact paths only, so /acp, /v1
// and unknown paths stay with the front door.
import { WEB_AGENTS_PATH, type WebAgentsResponse } from "../../protocol/web-client.ts";
import type { Principal } from "../hub/types.ts";
import type { Authenticator } from "../http/auth.ts";
import { bearerToken } from "../http/auth.ts";
import type { HttpRequest, HttpResponse, Route } from "../http/types.ts";
import type { PublicUrls } from "../http/public-url.ts";
import { type Asset, defaultWebClientDir, loadAssets } from "./assets.ts";
import { DEFAULT_WEB_IMMUTABLE_MAX_AGE_S } from "./limits.ts";
import { securityHeaders } from "./security-headers.ts";

export interface WebRouteOptions {
  auth: Authenticator;
  /** Names of the configured agents, the default first. */
  agentNames(): string[];
  /** The folder the person's new sessions start in by default (ACP needs one in session/new; the page offers it). */
  defaultCwd(principal: Principal): Promise<string>;
  /** The server speaks TLS (the page's WebSocket origin is then wss:). */
  secure: boolean;
  /** The addresses the page may be opened at through a proxy: their WebSocket origins join the page's connect-src. */
  publicUrls?: PublicUrls;
  /** The built client; dist/web/client beside the CLI by default. */
  dir?: string;
}

const INDEX = "/index.html";

export function createWebRoute(options: WebRouteOptions): Route {
  const dir = options.dir ?? defaultWebClientDir();
  let assets = loadAssets(dir);
  /** Read again while missing, so a build made after the start is served. */
  const current = (): Map<string, Asset> | undefined => (assets ??= loadAssets(dir));

  function send(req: HttpRequest, res: HttpResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    res.writeHead(status, { ...securityHeaders(req, options.secure, options.publicUrls), ...headers, "content-length": String(bytes.length) });
    res.end(req.method === "HEAD" ? undefined : bytes);
  }

  function text(req: HttpRequest, res: HttpResponse, status: number, message: string, extra: Record<string, string> = {}): void {
    send(req, res, status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...extra }, `${message}\n`);
  }

  function json(req: HttpRequest, res: HttpResponse, status: number, value: unknown, extra: Record<string, string> = {}): void {
    send(req, res, status, { "content-type": "application/json", "cache-control": "no-store", ...extra }, JSON.stringify(value));
  }

  function serveAsset(req: HttpRequest, res: HttpResponse, path: string): void {
    const found = current();
    const asset = found?.get(path === "/" ? INDEX : path);
    if (asset === undefined) {
      text(req, res, found === undefined ? 503 : 404, found === undefined ? "The web client is not built: run npm run build." : "Not found.");
      return;
    }
    const headers = {
      "content-type": asset.type,
      etag: asset.etag,
      "cache-control": asset.immutable ? `public, max-age=${DEFAULT_WEB_IMMUTABLE_MAX_AGE_S}, immutable` : "no-cache",
    };
    if (req.headers["if-none-match"]?.split(",").some((tag) => tag.trim() === asset.etag)) {
      res.writeHead(304, { ...securityHeaders(req, options.secure, options.publicUrls), ...headers });
      res.end();
      return;
    }
    send(req, res, 200, headers, asset.body);
  }

  async function serveAgents(req: HttpRequest, res: HttpResponse): Promise<void> {
    const principal = options.auth.authenticate(bearerToken(req.headers.authorization));
    if (principal === undefined) {
      json(req, res, 401, { error: { message: "missing or unknown token" } }, { "www-authenticate": 'Bearer realm="acp-remote"' });
      return;
    }
    const cwd = await options.defaultCwd(principal);
    const body: WebAgentsResponse = { agents: options.agentNames().map((name, i) => ({ name, isDefault: i === 0, cwd })) };
    json(req, res, 200, body);
  }

  return {
    prefix: "/",
    matches(path) {
      return path === "/" || path === WEB_AGENTS_PATH || current()?.has(path) === true;
    },
    handle(req, res) {
      // The page's requests have no body; whatever comes is drained so the connection can be reused.
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        text(req, res, 405, "Method not allowed.", { allow: "GET, HEAD" });
        return;
      }
      // The raw path, as the front door matched it: no decoding, no dot segments resolved.
      const target = req.url ?? "/";
      const path = target.split("?", 1)[0]!;
      if (path === WEB_AGENTS_PATH) {
        serveAgents(req, res).catch((error: unknown) => {
          if (!res.headersSent) json(req, res, 500, { error: { message: `no folder for a new session: ${error instanceof Error ? error.message : String(error)}` } });
        });
      } else serveAsset(req, res, path);
    },
    refuse(req, res, refusal) {
      text(req, res, refusal.status, refusal.message);
    },
  };
}
