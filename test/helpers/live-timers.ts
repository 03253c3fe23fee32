// The timers of this process that are alive (created, neither fired nor
// cleared), unref'd ones included, seen through async_hooks: whether code
// left a timer of a given duration armed.
import { createHook } from "node:async_hooks";

export class LiveTimers {
  readonly #live = new Map<number, { _idleTimeout?: number }>();
  readonly #hook = createHook({
    init: (id, type, _trigger, resource) => {
      if (type === "Timeout") this.#live.set(id, resource as { _idleTimeout?: number });
    },
    destroy: (id) => {
      this.#live.delete(id);
    },
  });

  /** Watches the timers created from now on. */
  watch(): void {
    this.#hook.enable();
  }

  /** How many watched timers of `ms` are alive. */
  armed(ms: number): number {
    return [...this.#live.values()].filter((timer) => timer._idleTimeout === ms).length;
  }

  /**
   * Stops watching once no timer of `ms` is alive, or after `deadlineMs` (the
   * destroy hook of a cleared timer runs on a later turn); how many still are.
   */
  async armedAtEnd(ms: number, deadlineMs: number): Promise<number> {
    const deadline = Date.now() + deadlineMs;
    while (this.armed(ms) > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    this.#hook.disable();
    return this.armed(ms);
  }
}
