// What an SSE stream wrote, kept for a reader that comes back with the number
// of the last event it got (`Last-Event-ID`): what a cut stream wrote into a
// dead socket never arrived, so what follows that number is sent again. The
// log keeps the newest written messages within `replayEvents` and
// `replayChars`, and what all streams of a server keep is bounded together
// too (ReplayBudget): past either, the oldest are forgotten.
//
// The numbers are the stream's (outbound-stream.ts): every message it numbers
// is written or dropped in that order, and the newest message kept is always
// the last one written, so the log needs only how many it keeps.
import type { BudgetedLog, ReplayBudget } from "./replay-budget.ts";

export interface ReplayLimits {
  /** Written messages kept for a reader that resumes, in events (DEFAULT_SSE_REPLAY_EVENTS). */
  replayEvents: number;
  /** The same bound in characters of JSON text (DEFAULT_SSE_REPLAY_CHARS). */
  replayChars: number;
  /** What the server's streams keep together (DEFAULT_SSE_REPLAY_BUDGET_CHARS); unbounded when absent. */
  replayBudget?: ReplayBudget;
}

/**
 * Forgotten positions at the head of the log past which its kept part is
 * copied down, once it is at most half of the array; in messages.
 */
const COMPACT_AFTER_MESSAGES = 1024;

export class ReplayLog implements BudgetedLog {
  readonly #limits: ReplayLimits;
  /**
   * Written messages, oldest first: those before #oldest are forgotten, the
   * rest are kept. Positions move instead of `shift()`, which copies the
   * whole rest of a long array on each call.
   */
  #entries: (string | undefined)[] = [];
  #oldest = 0;
  #keptChars = 0;

  constructor(limits: ReplayLimits) {
    this.#limits = limits;
  }

  /** Messages kept for a resume. */
  get keptMessages(): number {
    return this.#entries.length - this.#oldest;
  }

  /** Characters of the messages kept for a resume. */
  get keptChars(): number {
    return this.#keptChars;
  }

  /** A message was written: keep it for a resume, and forget the oldest past the bounds. */
  keep(json: string): void {
    const entries = this.#entries;
    entries.push(json);
    let delta = json.length;
    this.#keptChars += json.length;
    const { replayEvents, replayChars } = this.#limits;
    while (this.#oldest < entries.length && (entries.length - this.#oldest > replayEvents || this.#keptChars > replayChars)) {
      delta -= this.#forgetOne();
    }
    this.#compact();
    // Told last: the budget may trim this very log.
    this.#limits.replayBudget?.changed(this, delta);
  }

  /**
   * Takes back the newest `count` kept messages, oldest first, to be written
   * again; each is kept again as it is written. At most `keptMessages`.
   */
  takeBack(count: number): string[] {
    if (count <= 0) return [];
    const from = this.#entries.length - count;
    const taken = this.#entries.slice(from) as string[];
    this.#entries.length = from;
    let chars = 0;
    for (const json of taken) chars += json.length;
    this.#changeKept(-chars);
    return taken;
  }

  /** The server's replay budget is spent: forget the oldest kept messages until at most `chars` are kept. */
  forgetOldest(chars: number): void {
    let delta = 0;
    while (this.#oldest < this.#entries.length && this.#keptChars > chars) delta -= this.#forgetOne();
    this.#compact();
    if (delta !== 0) this.#limits.replayBudget?.changed(this, delta);
  }

  /** Forgets every kept message (its reader was cut off, or its stream closed). */
  clear(): void {
    this.#entries = [];
    this.#oldest = 0;
    this.#changeKept(-this.#keptChars);
  }

  /** Forgets the oldest kept message; its length in characters. */
  #forgetOne(): number {
    const length = (this.#entries[this.#oldest] as string).length;
    this.#keptChars -= length;
    this.#entries[this.#oldest] = undefined;
    this.#oldest += 1;
    return length;
  }

  /** Kept characters change by `delta` outside of `keep` (a take-back, a clear): the budget is told. */
  #changeKept(delta: number): void {
    this.#keptChars += delta;
    if (delta !== 0) this.#limits.replayBudget?.changed(this, delta);
  }

  /** Drops the forgotten head of the log once it is all of it, or most of a long one. */
  #compact(): void {
    const drop = this.#oldest;
    if (drop === 0) return;
    if (drop === this.#entries.length) {
      this.#entries.length = 0;
      this.#oldest = 0;
      return;
    }
    if (drop < COMPACT_AFTER_MESSAGES || drop * 2 < this.#entries.length) return;
    this.#entries = this.#entries.slice(drop);
    this.#oldest = 0;
  }
}
