// What all SSE streams of one server keep for readers that resume
// (Last-Event-ID), bounded together. Each stream keeps at most
// DEFAULT_SSE_REPLAY_EVENTS / DEFAULT_SSE_REPLAY_CHARS on its own, but a
// server holds many streams; past DEFAULT_SSE_REPLAY_BUDGET_CHARS in all, the
// oldest kept events of the largest logs are forgotten first. A reader that
// then resumes from one of them is answered 410, as for any event no longer
// kept, and loads its session instead: the largest logs are the streams whose
// readers fell furthest behind, or that nobody reads.

/** A stream's log of written events (replay-log.ts), as the budget sees it. */
export interface BudgetedLog {
  /** Characters of the events it keeps now. */
  readonly keptChars: number;
  /** Forgets its oldest kept events until it keeps at most `chars` characters. */
  forgetOldest(chars: number): void;
}

/**
 * Once over the budget, logs are trimmed until the total is this fraction of
 * it below the budget, so that a server at its budget does not look for the
 * largest log again on every event it writes.
 */
const TRIM_MARGIN_DIVISOR = 16;

export class ReplayBudget {
  readonly #limitChars: number;
  readonly #logs = new Set<BudgetedLog>();
  #usedChars = 0;
  #trimming = false;

  /** `limitChars`: characters of kept events, all streams together (DEFAULT_SSE_REPLAY_BUDGET_CHARS). */
  constructor(limitChars: number) {
    this.#limitChars = limitChars;
  }

  /** Characters kept by every stream now. */
  get usedChars(): number {
    return this.#usedChars;
  }

  /** `log` now keeps `delta` more characters (fewer when negative); past the budget, logs are trimmed. */
  changed(log: BudgetedLog, delta: number): void {
    this.#usedChars += delta;
    if (log.keptChars > 0) this.#logs.add(log);
    else this.#logs.delete(log);
    if (this.#usedChars > this.#limitChars && !this.#trimming) this.#trim();
  }

  #trim(): void {
    this.#trimming = true;
    try {
      const target = this.#limitChars - Math.floor(this.#limitChars / TRIM_MARGIN_DIVISOR);
      while (this.#usedChars > target) {
        let largest: BudgetedLog | undefined;
        let second = 0;
        for (const log of this.#logs) {
          if (largest === undefined || log.keptChars > largest.keptChars) {
            second = largest?.keptChars ?? 0;
            largest = log;
          } else if (log.keptChars > second) {
            second = log.keptChars;
          }
        }
        if (largest === undefined) return;
        const before = largest.keptChars;
        // Down to the next largest (then both are trimmed in turn), or just what the total needs; one event at least.
        largest.forgetOldest(Math.min(before - 1, Math.max(second, before - (this.#usedChars - target))));
        // A log that cannot shrink (it never should) must not hold the loop.
        if (largest.keptChars >= before) return;
      }
    } finally {
      this.#trimming = false;
    }
  }
}
