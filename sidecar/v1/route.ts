// The /v1 route: OpenAI-style chat completions with the deferred mode
// (spec: deferred-completions.md; design: Deferred completions). Endpoints:
//
//   POST   /v1/chat/completions                    deferred → {request_id}; plain → chat.completion; stream → SSE
//   GET    /v1/chat/deferred-completion/{id}       202 pending, 200 once, then 404
//   DELETE /v1/chat/deferred-completion/{id}       beyond the spec: cancels and discards a job
//   GET    /v1/models, /v1/models/{id}             agents (owned_by "acp-remote") and upstream models
//
// This file wires the parts (backends, slots, rate limit, job queue) and
// answers what the router throws; router.ts routes, handlers/ answer.
import { listen } from "../../common/listeners.ts";
import type { Route } from "../http/types.ts";
import type { Authenticator } from "../http/auth.ts";
import type { OneShotPermissionPolicy, OneShotRunner } from "../hub/types.ts";
import type { SharedStore } from "../store/shared-store.ts";
import type { ChatRequest, ModelInfo } from "../../protocol/v1.ts";
import { V1_PREFIX } from "../../protocol/v1.ts";
import { V1Error, backendFailed, sendError, storeUnavailable, toV1Error, unknownModel } from "./errors.ts";
import { JobQueue, type Job, type JobOutcome, type JobState } from "./jobs.ts";
import { Slots } from "./slots.ts";
import { unixSeconds } from "./completion.ts";
import type { Backend } from "./backends/types.ts";
import { createAgentBackend } from "./backends/agent.ts";
import { createUpstreamBackend, UPSTREAM_BACKEND_KEY, type UpstreamBackend } from "./backends/upstream.ts";
import { DEFAULT_V1_LIMITS, type V1Limits } from "./config.ts";
import { dispatch } from "./router.ts";
import type { V1Context } from "./handlers/context.ts";

export { DEFAULT_V1_LIMITS, type V1Limits } from "./config.ts";

export interface V1RouteOptions {
  auth: Authenticator;
  runner: OneShotRunner;
  /** Where deferred jobs and rate buckets live. */
  store: SharedStore;
  upstream?: { url: string; apiKey?: string };
  /** Milliseconds since the epoch; tests inject one to expire results without waiting. */
  clock?: () => number;
  limits?: Partial<V1Limits>;
  /**
   * Who answers an agent's permission request during a completion. Absent:
   * the hub's default (the editor when one is attached, else reject).
   */
  permissions?: OneShotPermissionPolicy;
  /** Working folder of the server's own person's one-shot sessions (another person's work in their own folder). */
  cwd?: string;
  /** On a shared store: how often to look for jobs queued or left behind by other nodes, in milliseconds. */
  rescanMs?: number;
  /** Every change of a deferred job's state. */
  onJobChange?: (id: string, state: JobState | "deleted", owner: string) => void;
}

/** A deferred job changed state: whose it is, and when (the route's clock, milliseconds since the epoch). */
export interface JobChange {
  id: string;
  owner: string;
  state: JobState | "deleted";
  at: number;
}

export interface V1Route extends Route {
  close(): Promise<void>;
  setUpstreamKey(key: string | null): void;
  /** Hears every change of a deferred job's state (the control protocol tells the editor of its person's); returns an unsubscribe. */
  onJobChange(listener: (change: JobChange) => void): () => void;
}

export function createV1Route(options: V1RouteOptions): V1Route {
  const limits: V1Limits = { ...DEFAULT_V1_LIMITS, ...options.limits };
  const clock = options.clock ?? Date.now;
  const permissions = options.permissions;
  const agents = createAgentBackend({
    runner: options.runner,
    clock,
    ...(permissions ? { permissions } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const upstream: UpstreamBackend | undefined = options.upstream
    ? createUpstreamBackend({
        url: options.upstream.url,
        apiKey: options.upstream.apiKey ?? null,
        clock,
        maxEventChars: limits.upstreamMaxEventChars,
      })
    : undefined;
  const slots = new Slots(limits.concurrencyPerBackend);
  if (!(limits.ratePerMinute > 0)) throw new RangeError(`rate limit must be positive, got ${limits.ratePerMinute}`);
  const rate = options.store.rates(clock);

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
    const completion = await backend.complete(request, { id: job.id, requestId: job.id, created: unixSeconds(job.createdAt), owner: job.owner, signal });
    return { status: 200, body: completion };
  }

  const jobListeners = new Set<(change: JobChange) => void>();
  const jobs = new JobQueue({
    store: options.store.jobs({ clock, ttlMs: limits.resultTtlMs }),
    events: options.store.nodes,
    slots,
    run: runJob,
    sweepIntervalMs: limits.sweepIntervalMs,
    maxAttempts: limits.maxJobAttempts,
    maxPendingPerOwner: limits.maxPendingJobsPerKey,
    jobTimeoutMs: limits.jobTimeoutMs,
    ...(options.rescanMs === undefined ? {} : { rescanMs: options.rescanMs }),
    onChange(id, state, owner) {
      options.onJobChange?.(id, state, owner);
      if (jobListeners.size === 0) return;
      const change: JobChange = { id, owner, state, at: clock() };
      for (const listener of jobListeners) listener(change);
    },
  });

  async function listModels(): Promise<ModelInfo[]> {
    const own = await agents.models();
    const names = new Set(own.map((m) => m.id));
    const theirs = upstream ? (await upstream.models()).filter((m) => !names.has(m.id)) : [];
    return [...own, ...theirs];
  }


  const ctx: V1Context = { limits, clock, slots, rate, jobs, backendOf, resolve, listModels };

  return {
    prefix: V1_PREFIX,
    needsStore: true,
    refuse(_req, res, refusal) {
      if (refusal.status === 503) return sendError(res, storeUnavailable(refusal.message, refusal.retryAfterSeconds));
      sendError(res, new V1Error(refusal.status, refusal.message, refusal.status === 403 ? { code: "forbidden" } : {}));
    },
    handle(req, res) {
      dispatch(ctx, options.auth, req, res).catch((error: unknown) => {
        // Whatever is left of the body is drained so that the connection can be reused.
        if (!req.readableEnded) req.resume();
        sendError(res, error instanceof V1Error ? error : toV1Error(error));
      });
    },
    setUpstreamKey(key) {
      upstream?.setKey(key);
    },
    onJobChange(listener) {
      return listen(jobListeners, listener);
    },
    close() {
      return jobs.close();
    },
  };
}
