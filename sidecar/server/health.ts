// Health endpoints for load balancers and orchestrators, outside /acp and /v1:
// `/healthz` answers 200 while the process runs (liveness), `/readyz` 200 when
// the node can take traffic and 503 with a reason when it cannot (readiness:
// draining after SIGTERM, or a dependency it needs is unreachable). Both are
// unauthenticated, so that a balancer's check needs no token, and say nothing
// but a status word and the reason.
import type { HttpRequest, HttpResponse, Route } from "../http/types.ts";
import { DEFAULT_NOT_READY_RETRY_AFTER_S, DEFAULT_READINESS_CHECK_TIMEOUT_MS } from "../http/server-limits.ts";

export const HEALTH_PATH = "/healthz";
const READY_PATH = "/readyz";

export type ReadinessState = { ready: true } | { ready: false; reason: string };

/** Whether the node can take traffic now; serve() composes it from its checks. */
export interface Readiness {
  check(): Promise<ReadinessState>;
}

/** One condition of readiness: the reason the node is not ready, or undefined when this condition holds. */
export type ReadinessCheck = () => string | undefined | Promise<string | undefined>;

/** Readiness made of checks run in order: the first that names a reason decides. */
export function readinessOf(checks: readonly ReadinessCheck[]): Readiness {
  return {
    async check() {
      for (const check of checks) {
        const reason = await check();
        if (reason !== undefined) return { ready: false, reason };
      }
      return { ready: true };
    },
  };
}

export interface HealthRouteOptions {
  readiness: Readiness;
  /** How long a readiness check may take before /readyz answers 503, in milliseconds. */
  checkTimeoutMs?: number;
  /** `Retry-After` of a 503, in seconds. */
  retryAfterSeconds?: number;
}

const ALLOWED_METHODS = "GET, HEAD";

export function createHealthRoute(options: HealthRouteOptions): Route & { close(): Promise<void> } {
  const checkTimeoutMs = options.checkTimeoutMs ?? DEFAULT_READINESS_CHECK_TIMEOUT_MS;
  const retryAfter = String(options.retryAfterSeconds ?? DEFAULT_NOT_READY_RETRY_AFTER_S);

  function send(req: HttpRequest, res: HttpResponse, status: number, body: Record<string, string>, extra: Record<string, string> = {}): void {
    if (res.writableEnded || res.destroyed) return;
    const bytes = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": String(bytes.length), ...extra });
    res.end(req.method === "HEAD" ? undefined : bytes);
  }

  /** The readiness state, or a failure of its own when a check throws or takes too long. */
  async function readiness(): Promise<ReadinessState> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ReadinessState>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, reason: `readiness check took longer than ${checkTimeoutMs} ms` }), checkTimeoutMs);
    });
    try {
      return await Promise.race([
        options.readiness.check().catch((error: unknown): ReadinessState => ({
          ready: false,
          reason: `readiness check failed: ${error instanceof Error ? error.message : String(error)}`,
        })),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    prefix: HEALTH_PATH,
    matches: (path) => path === HEALTH_PATH || path === READY_PATH,
    handle(req, res) {
      // Bodies are not read: drop whatever a client sent.
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        send(req, res, 405, { status: "error", reason: `method ${req.method ?? ""} not allowed` }, { allow: ALLOWED_METHODS });
        return;
      }
      const path = (req.url ?? "").split("?", 1)[0];
      if (path === HEALTH_PATH) {
        send(req, res, 200, { status: "ok" });
        return;
      }
      void readiness().then((state) => {
        if (state.ready) send(req, res, 200, { status: "ready" });
        else send(req, res, 503, { status: "unavailable", reason: state.reason }, { "retry-after": retryAfter });
      });
    },
    refuse(req, res, refusal) {
      send(req, res, refusal.status, { status: "error", reason: refusal.message });
    },
    close: async () => undefined,
  };
}
