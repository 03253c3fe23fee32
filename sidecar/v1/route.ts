// The /v1 route: OpenAI-style chat completions with the deferred mode
// (spec: deferred-completions.md; design: Deferred completions). Endpoints:
//
//   POST   /v1/chat/completions                    deferred → {request_id}; plain → chat.completion; stream → SSE
//   GET    /v1/chat/deferred-completion/{id}       202 pending, 200 once, then 404
//   DELETE /v1/chat/deferred-completion/{id}       beyond the spec: cancels and discards a job
//   GET    /v1/models, /v1/models/{id}             agents (owned_by "acp-remote") and upstream models
//
// Every request needs `Authorization: Bearer <key>` (spec: Authentication);
// errors go through errors.ts only.
import type { HttpRequest, HttpResponse, Route } from "../server/http/types.ts";
import type { Authenticator } from "../server/http/auth.ts";
import { bearerToken } from "../server/http/auth.ts";
import type { OneShotPermissionPolicy, OneShotRunner, Principal } from "../hub/types.ts";
import type { Database } from "../store/store.ts";
import type { ChatRequest, ChatCompletion, DeferredSubmission, ModelInfo } from "../../protocol/v1.ts";
import { ObjectType, V1Path, V1_PREFIX } from "../../protocol/v1.ts";
import {
  V1Error,
  backendFailed,
  methodNotAllowed,
  rateLimited,
  sendError,
  sendStoredError,
  toV1Error,
  unauthorized,
  unknownModel,
  unknownPath,
  unknownRequestId,
  type ErrorBody,
} from "./errors.ts";
import { readJsonBody } from "./read-body.ts";
import { sendJson, writeHead } from "./respond.ts";
import { validateChatRequest } from "./validate.ts";
import { JobQueue, TooManyJobsError, type Job, type JobOutcome, type JobState } from "./jobs.ts";
import { Slots } from "./slots.ts";
import { RateLimiter } from "./rate-limit.ts";
import { EventStream } from "./sse.ts";
import { newCompletionId, unixSeconds } from "./completion.ts";
import type { Backend } from "./backends/types.ts";
import { createAgentBackend } from "./backends/agent.ts";
import { createUpstreamBackend, UPSTREAM_BACKEND_KEY, type UpstreamBackend } from "./backends/upstream.ts";
import {
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_V1_CONCURRENCY_PER_BACKEND,
  DEFAULT_V1_JOB_TIMEOUT_MS,
  DEFAULT_V1_MAX_JOB_ATTEMPTS,
  DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  DEFAULT_V1_RATE_LIMIT_PER_MINUTE,
  DEFAULT_V1_RESULT_TTL_MS,
  DEFAULT_V1_STREAM_DRAIN_TIMEOUT_MS,
  DEFAULT_V1_STREAM_MAX_QUEUED_BYTES,
  DEFAULT_V1_STREAM_MAX_QUEUED_CHUNKS,
  DEFAULT_V1_SWEEP_INTERVAL_MS,
  DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS,
} from "../limits.ts";

/** Environment variable with the upstream provider's API key (the editor may set it instead). */
export const UPSTREAM_KEY_ENV = "ACP_REMOTE_UPSTREAM_KEY";
/** Environment variable with the permission policy of completions on agents: editor, allow or reject. */
export const PERMISSIONS_ENV = "ACP_REMOTE_V1_PERMISSIONS";

const PERMISSION_POLICIES: readonly OneShotPermissionPolicy[] = ["editor", "allow", "reject"];

/** The policy from the environment, or undefined (the hub's default). A wrong value stops the start with a clear error. */
function permissionsFromEnv(): OneShotPermissionPolicy | undefined {
  const value = process.env[PERMISSIONS_ENV];
  if (value === undefined || value === "") return undefined;
  if (!(PERMISSION_POLICIES as readonly string[]).includes(value)) {
    throw new Error(`${PERMISSIONS_ENV} must be one of ${PERMISSION_POLICIES.join(", ")}, not "${value}"`);
  }
  return value as OneShotPermissionPolicy;
}

export interface V1Limits {
  /** Bytes; 413 beyond. */
  maxBodyBytes: number;
  /** Chat completion requests per key per minute; 429 beyond. */
  ratePerMinute: number;
  /** Completions running at once on one backend. */
  concurrencyPerBackend: number;
  /** Milliseconds a deferred result is kept after creation. */
  resultTtlMs: number;
  /** Milliseconds between sweeps of expired results. */
  sweepIntervalMs: number;
  /** Starts of one deferred job across restarts. */
  maxJobAttempts: number;
  /** Deferred jobs waiting or running per key; 429 beyond. */
  maxPendingJobsPerKey: number;
  /** Milliseconds one completion may run. */
  jobTimeoutMs: number;
  /** `stream: true`: chunks and bytes queued for a client that does not read before it is cut off. */
  streamMaxQueuedChunks: number;
  streamMaxQueuedBytes: number;
  /** `stream: true`: milliseconds a client has to take the queued end of a finished stream. */
  streamDrainTimeoutMs: number;
  /** `stream: true`: milliseconds between keep-alive comments. */
  keepAliveMs: number;
  /** Largest event of the upstream provider's event stream, in UTF-16 code units; 502 beyond. */
  upstreamMaxEventChars: number;
}

export const DEFAULT_V1_LIMITS: Readonly<V1Limits> = {
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  ratePerMinute: DEFAULT_V1_RATE_LIMIT_PER_MINUTE,
  concurrencyPerBackend: DEFAULT_V1_CONCURRENCY_PER_BACKEND,
  resultTtlMs: DEFAULT_V1_RESULT_TTL_MS,
  sweepIntervalMs: DEFAULT_V1_SWEEP_INTERVAL_MS,
  maxJobAttempts: DEFAULT_V1_MAX_JOB_ATTEMPTS,
  maxPendingJobsPerKey: DEFAULT_V1_MAX_PENDING_JOBS_PER_KEY,
  jobTimeoutMs: DEFAULT_V1_JOB_TIMEOUT_MS,
  streamMaxQueuedChunks: DEFAULT_V1_STREAM_MAX_QUEUED_CHUNKS,
  streamMaxQueuedBytes: DEFAULT_V1_STREAM_MAX_QUEUED_BYTES,
  streamDrainTimeoutMs: DEFAULT_V1_STREAM_DRAIN_TIMEOUT_MS,
  keepAliveMs: DEFAULT_KEEPALIVE_MS,
  upstreamMaxEventChars: DEFAULT_V1_UPSTREAM_MAX_EVENT_CHARS,
};

export interface V1RouteOptions {
  auth: Authenticator;
  runner: OneShotRunner;
  store: Database;
  upstream?: { url: string; apiKey?: string };
  /** Milliseconds since the epoch; tests inject one to expire results without waiting. */
  clock?: () => number;
  limits?: Partial<V1Limits>;
  /**
   * Who answers an agent's permission request during a completion. Absent:
   * `ACP_REMOTE_V1_PERMISSIONS`, else the hub's default (the editor when one
   * is attached, else reject).
   */
  permissions?: OneShotPermissionPolicy;
  /** Working folder of the one-shot sessions. */
  cwd?: string;
  /** Every change of a deferred job's state. */
  onJobChange?: (id: string, state: JobState | "deleted") => void;
}

export interface V1Route extends Route {
  close(): Promise<void>;
  setUpstreamKey(key: string | null): void;
}

/** An AbortSignal that fires when the client goes away before the response is complete. */
function clientGone(res: HttpResponse): AbortSignal {
  const controller = new AbortController();
  // Not "finish": HTTP/2 compatibility responses emit it (then "close") when the client resets the stream.
  res.on("close", () => {
    if (!res.writableEnded) controller.abort(new Error("the client closed the request"));
  });
  return controller.signal;
}

export function createV1Route(options: V1RouteOptions): V1Route {
  const limits: V1Limits = { ...DEFAULT_V1_LIMITS, ...options.limits };
  const clock = options.clock ?? Date.now;
  const { auth } = options;
  const permissions = options.permissions ?? permissionsFromEnv();
  const agents = createAgentBackend({
    runner: options.runner,
    clock,
    ...(permissions ? { permissions } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const upstream: UpstreamBackend | undefined = options.upstream
    ? createUpstreamBackend({
        url: options.upstream.url,
        apiKey: options.upstream.apiKey ?? process.env[UPSTREAM_KEY_ENV] ?? null,
        clock,
        maxEventChars: limits.upstreamMaxEventChars,
      })
    : undefined;
  const slots = new Slots(limits.concurrencyPerBackend);
  const rate = new RateLimiter(limits.ratePerMinute, clock);

  function backendOf(key: string): Backend | undefined {
    if (key === UPSTREAM_BACKEND_KEY) return upstream;
    return agents;
  }

  /** The backend key that serves `model`: agents first, then the upstream provider; 404 otherwise. */
  async function resolve(model: string): Promise<string> {
    const key = (await agents.resolve(model)) ?? (await upstream?.resolve(model));
    if (key === undefined) throw unknownModel(model);
    return key;
  }

  async function runJob(job: Job, signal: AbortSignal): Promise<JobOutcome> {
    const request = JSON.parse(job.request) as ChatRequest;
    const backend = backendOf(job.backend);
    // After a restart the configuration may have changed: the model must still be served by the same backend.
    // A failed job answers 5xx (design: decision 2); a 404 would read as an unknown request_id.
    if (!backend || (await backend.resolve(request.model)) !== job.backend) {
      throw backendFailed(`The model "${request.model}" is no longer served by this sidecar; the job cannot run.`);
    }
    const completion = await backend.complete(request, { id: job.id, created: unixSeconds(job.createdAt), signal });
    return { status: 200, body: completion };
  }

  const jobs = new JobQueue({
    db: options.store,
    slots,
    run: runJob,
    clock,
    ttlMs: limits.resultTtlMs,
    sweepIntervalMs: limits.sweepIntervalMs,
    maxAttempts: limits.maxJobAttempts,
    maxPendingPerOwner: limits.maxPendingJobsPerKey,
    jobTimeoutMs: limits.jobTimeoutMs,
    ...(options.onJobChange ? { onChange: options.onJobChange } : {}),
  });

  async function listModels(): Promise<ModelInfo[]> {
    const own = await agents.models();
    const names = new Set(own.map((m) => m.id));
    const theirs = upstream ? (await upstream.models()).filter((m) => !names.has(m.id)) : [];
    return [...own, ...theirs];
  }

  function authenticate(req: HttpRequest): Principal {
    const principal = auth.authenticate(bearerToken(req.headers.authorization));
    if (!principal) throw unauthorized();
    return principal;
  }

  /** Spec: Limits 3; deferred and plain requests share one bucket per key. */
  function checkRate(principal: Principal): void {
    const decision = rate.take(principal.id);
    if (!decision.allowed) {
      throw rateLimited(`Rate limit of ${limits.ratePerMinute} chat completion requests per minute reached.`, decision.retryAfterSeconds);
    }
  }

  async function chatCompletions(req: HttpRequest, res: HttpResponse, principal: Principal): Promise<void> {
    checkRate(principal);
    const request = validateChatRequest(await readJsonBody(req, limits.maxBodyBytes));
    const key = await resolve(request.model);
    if (request.deferred) {
      let id: string;
      try {
        id = jobs.submit(principal.id, key, request.model, request);
      } catch (error) {
        if (error instanceof TooManyJobsError) throw rateLimited(error.message, 60);
        throw error;
      }
      const body: DeferredSubmission = { request_id: id };
      return sendJson(res, 200, body);
    }
    const backend = backendOf(key);
    if (!backend) throw unknownModel(request.model);
    const signal = clientGone(res);
    await slots.acquire(key, signal);
    let stream: EventStream | undefined;
    try {
      const run = { id: newCompletionId(), created: unixSeconds(clock()), signal };
      if (!request.stream) {
        const completion: ChatCompletion = await backend.complete(request, run);
        return sendJson(res, 200, completion);
      }
      // The stream opens (200) with the first chunk: a backend that fails before it answers with its own status.
      const open = (): EventStream =>
        (stream ??= new EventStream(res, {
          maxQueuedChunks: limits.streamMaxQueuedChunks,
          maxQueuedBytes: limits.streamMaxQueuedBytes,
          drainTimeoutMs: limits.streamDrainTimeoutMs,
          keepAliveMs: limits.keepAliveMs,
        }));
      try {
        await backend.complete(request, { ...run, onChunk: (chunk) => open().send(chunk) });
      } catch (error) {
        if (signal.aborted || !stream) throw error;
        stream.error(toV1Error(error).body());
      }
    } finally {
      // The backend is done: its slot is free even while a slow client still reads the end of the stream.
      slots.release(key);
    }
    await stream?.end();
  }

  function deferredCompletion(req: HttpRequest, res: HttpResponse, principal: Principal, id: string): void {
    if (req.method === "GET") {
      const got = jobs.take(principal.id, id);
      if (got.kind === "gone") throw unknownRequestId(id);
      if (got.kind === "pending") {
        // Spec: "202: result not ready; empty body".
        writeHead(res, 202, { "content-length": 0 });
        return void res.end();
      }
      if (got.status === 200) return sendJson(res, 200, got.body);
      // Design: decision 2, a failed job answers once with its status and error body.
      return sendStoredError(res, got.status, got.body as ErrorBody);
    }
    if (req.method === "DELETE") {
      if (!jobs.cancel(principal.id, id)) throw unknownRequestId(id);
      return sendJson(res, 200, { request_id: id, object: ObjectType.deferredDeleted, deleted: true });
    }
    throw methodNotAllowed(req.method ?? "", ["GET", "DELETE"]);
  }

  async function models(req: HttpRequest, res: HttpResponse, id: string | undefined): Promise<void> {
    if (req.method !== "GET") throw methodNotAllowed(req.method ?? "", ["GET"]);
    const all = await listModels();
    if (id === undefined) return sendJson(res, 200, { object: ObjectType.list, data: all });
    const model = all.find((m) => m.id === id);
    if (!model) throw unknownModel(id);
    return sendJson(res, 200, model);
  }

  /** A path segment, decoded; a malformed escape is a path /v1 does not have (404), not a 500. */
  function segment(path: string, prefix: string): string {
    try {
      return decodeURIComponent(path.slice(prefix.length + 1));
    } catch {
      throw unknownPath(path);
    }
  }

  async function dispatch(req: HttpRequest, res: HttpResponse): Promise<void> {
    const principal = authenticate(req);
    const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
    if (path === V1Path.chatCompletions) {
      if (req.method !== "POST") throw methodNotAllowed(req.method ?? "", ["POST"]);
      return chatCompletions(req, res, principal);
    }
    if (path.startsWith(`${V1Path.deferredCompletion}/`)) {
      const id = segment(path, V1Path.deferredCompletion);
      if (id.length === 0 || id.includes("/")) throw unknownPath(path);
      return deferredCompletion(req, res, principal, id);
    }
    if (path === V1Path.models) return models(req, res, undefined);
    if (path.startsWith(`${V1Path.models}/`)) return models(req, res, segment(path, V1Path.models));
    throw unknownPath(path);
  }

  return {
    prefix: V1_PREFIX,
    refuse(_req, res, refusal) {
      sendError(res, new V1Error(refusal.status, refusal.message, { code: "forbidden" }));
    },
    handle(req, res) {
      dispatch(req, res).catch((error: unknown) => {
        // Whatever is left of the body is drained so that the connection can be reused.
        if (!req.readableEnded) req.resume();
        sendError(res, error instanceof V1Error ? error : toV1Error(error));
      });
    },
    setUpstreamKey(key) {
      upstream?.setKey(key);
    },
    close() {
      return jobs.close();
    },
  };
}
