// When to restart a supervised process that crashed: at most `maxRestarts`
// crashes are restarted within a sliding window of `windowMs`; one more and the
// supervisor gives up. The delay before a restart doubles with each recent
// crash, from `minDelayMs` up to `maxDelayMs`. Pure: the caller passes the
// time, so that tests drive the clock (vscode-languageclient's
// DefaultErrorHandler keeps the same rule apart from the mechanism).

export interface RestartPolicyOptions {
  /** Crashes restarted within the window; the next one gives up. */
  maxRestarts: number;
  /** The sliding window the crashes are counted in, in milliseconds. */
  windowMs: number;
  /** Delay before the first restart, in milliseconds (0: at once). */
  minDelayMs?: number;
  /** Cap of the doubled delay, in milliseconds. */
  maxDelayMs?: number;
}

export type RestartDecision =
  | { readonly restart: true; readonly delayMs: number }
  /** `crashes`: the crashes within the window, this one included. */
  | { readonly restart: false; readonly crashes: number };

export class RestartPolicy {
  readonly maxRestarts: number;
  readonly windowMs: number;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  /** Times of the restarted crashes still within the window, oldest first. */
  readonly #crashes: number[] = [];

  constructor(options: RestartPolicyOptions) {
    if (!Number.isInteger(options.maxRestarts) || options.maxRestarts < 0) throw new RangeError(`maxRestarts must be an integer >= 0, got ${options.maxRestarts}`);
    if (!(options.windowMs >= 0)) throw new RangeError(`windowMs must be >= 0, got ${options.windowMs}`);
    this.maxRestarts = options.maxRestarts;
    this.windowMs = options.windowMs;
    this.#minDelayMs = Math.max(0, options.minDelayMs ?? 0);
    this.#maxDelayMs = Math.max(this.#minDelayMs, options.maxDelayMs ?? this.#minDelayMs);
  }

  /** Records a crash at `now` (milliseconds) and says whether to restart, and after how long. */
  onCrash(now: number = Date.now()): RestartDecision {
    while (this.#crashes.length > 0 && now - this.#crashes[0]! > this.windowMs) this.#crashes.shift();
    if (this.#crashes.length >= this.maxRestarts) return { restart: false, crashes: this.#crashes.length + 1 };
    this.#crashes.push(now);
    const delayMs = Math.min(this.#maxDelayMs, this.#minDelayMs * 2 ** (this.#crashes.length - 1));
    return { restart: true, delayMs };
  }

  /** Forgets the crashes seen, e.g. when the supervised process is started again by hand. */
  reset(): void {
    this.#crashes.length = 0;
  }
}
