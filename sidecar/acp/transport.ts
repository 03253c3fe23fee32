// The /acp endpoint: authentication, the protocol version header, then the
// profile (spec: "Routing summary"). Streamable HTTP answers POST, GET and
// DELETE on HTTP/2 and HTTP/1.1; a GET with `Upgrade: websocket` arrives as an
// HTTP/1.1 upgrade and goes to the WebSocket profile.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Authenticator } from "../http/auth.ts";
import type { HttpRequest, HttpResponse } from "../http/types.ts";
import type { ConnectionHub, Principal } from "../hub/types.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import { ConnectionRegistry } from "./connection-registry.ts";
import { authenticate, checkProtocolVersion } from "./credentials.ts";
import { Errors, rejectUpgrade, sendError } from "./errors.ts";
import { HttpProfile } from "./http-profile.ts";
import { ACP_PATH, AFFINITY_COOKIE } from "../../protocol/acp.ts";
import { WsProfile } from "./ws-profile.ts";

export interface AcpTransportOptions {
  hub: ConnectionHub;
  auth: Authenticator;
  limits: ServerLimits;
  /** Served over TLS: the affinity cookie gets `Secure`. */
  secure: boolean;
  log?: (line: string) => void;
}

export class AcpTransport {
  readonly #auth: Authenticator;
  readonly #registry: ConnectionRegistry;
  readonly #http: HttpProfile;
  readonly #ws: WsProfile;
  #closed = false;

  constructor(options: AcpTransportOptions) {
    this.#auth = options.auth;
    this.#registry = new ConnectionRegistry(options.limits);
    // Design, decision 7: an affinity cookie a load balancer can route on;
    // its value names this server instance, never a credential.
    const affinityCookie = `${AFFINITY_COOKIE}=${randomBytes(12).toString("base64url")}; Path=${ACP_PATH}; HttpOnly; SameSite=Strict${options.secure ? "; Secure" : ""}`;
    const shared = {
      hub: options.hub,
      registry: this.#registry,
      limits: options.limits,
      affinityCookie,
      log: options.log ?? (() => {}),
      closing: () => this.#closed,
    };
    this.#http = new HttpProfile(shared);
    this.#ws = new WsProfile(shared);
  }

  /** Transport connections open now (both profiles). */
  get connections(): number {
    return this.#registry.size;
  }

  handleRequest(req: HttpRequest, res: HttpResponse): void {
    this.#dispatch(req, res).catch((error: unknown) => sendError(res, error));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    try {
      if (this.#closed) throw Errors.shuttingDown();
      const principal = authenticate(req, this.#auth, { websocket: true });
      checkProtocolVersion(req);
      this.#ws.upgrade(req, socket, head, principal);
    } catch (error) {
      rejectUpgrade(socket, error);
    }
  }

  /**
   * A paired device was revoked: its connections end now (streams end,
   * WebSockets close with 1008 and a reason) and detach, so the person's
   * sessions stay loadable with another credential; its next request is
   * refused with 401.
   */
  dropDevice(deviceId: string): void {
    for (const connection of this.#registry.takeDevice(deviceId)) connection.revoke();
  }

  /**
   * Server shutdown: streams end and WebSockets close with 1001, and every
   * connection detaches, so its sessions stay loadable after a restart (the
   * hub's own shutdown is the caller's business).
   */
  close(): void {
    this.#closed = true;
    for (const connection of this.#registry.drain()) connection.detach();
    this.#ws.close();
  }

  async #dispatch(req: HttpRequest, res: HttpResponse): Promise<void> {
    if (this.#closed) throw Errors.shuttingDown();
    const principal: Principal = authenticate(req, this.#auth, { websocket: false });
    checkProtocolVersion(req);
    switch (req.method) {
      case "POST":
        return this.#http.post(req, res, principal);
      case "GET":
        return this.#http.get(req, res, principal);
      case "DELETE":
        return this.#http.delete(req, res, principal);
      default:
        throw Errors.methodNotAllowed("GET, POST, DELETE");
    }
  }
}
