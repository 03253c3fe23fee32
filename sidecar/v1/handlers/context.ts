// What the /v1 handlers share: limits, clock, the backends, the slots, the
// rate limiter and the job queue, wired once by ../route.ts.
import type { ModelInfo } from "../../../protocol/v1.ts";
import type { V1Limits } from "../config.ts";
import type { Backend } from "../backends/types.ts";
import type { Slots } from "../slots.ts";
import type { RateStore } from "../../store/shared-store.ts";
import type { JobQueue } from "../jobs.ts";

export interface V1Context {
  limits: V1Limits;
  clock: () => number;
  slots: Slots;
  rate: RateStore;
  jobs: JobQueue;
  backendOf(key: string): Backend | undefined;
  /** The backend key that serves `model`; 404 otherwise. */
  resolve(model: string): Promise<string>;
  listModels(): Promise<ModelInfo[]>;
}

