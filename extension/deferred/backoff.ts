// Polling a deferred result with exponential backoff: 1 s, 2 s, 4 s ... up to
// 60 s between GETs (the client pattern of the spec: "retry on 202 with
// exponential backoff (minimum 1 second, maximum 60 seconds, factor 2)").
import type { FetchOutcome } from "./api.ts";

export const POLL_MIN_MS = 1_000;
export const POLL_MAX_MS = 60_000;
export const POLL_FACTOR = 2;

export interface BackoffOptions {
  minMs?: number;
  maxMs?: number;
  factor?: number;
}

/** The delays before each next poll: min, min*factor, ... capped at max. */
export function* backoffDelays(options: BackoffOptions = {}): Generator<number, never> {
  const min = options.minMs ?? POLL_MIN_MS;
  const max = options.maxMs ?? POLL_MAX_MS;
  const factor = options.factor ?? POLL_FACTOR;
  let delay = min;
  for (;;) {
    yield delay;
    delay = Math.min(max, delay * factor);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
  });
}

/**
 * Calls `fetchOnce` until it is no longer pending, waiting the backoff delays
 * between calls; `onWait` hears each wait. Rejects with the signal's reason
 * when aborted.
 */
export async function pollUntilSettled(
  fetchOnce: () => Promise<FetchOutcome>,
  signal: AbortSignal,
  options: BackoffOptions & { onWait?: (ms: number, attempt: number) => void } = {},
): Promise<Exclude<FetchOutcome, { kind: "pending" }>> {
  const delays = backoffDelays(options);
  for (let attempt = 1; ; attempt++) {
    const outcome = await fetchOnce();
    if (outcome.kind !== "pending") return outcome;
    const delay = delays.next().value;
    options.onWait?.(delay, attempt);
    await sleep(delay, signal);
  }
}
