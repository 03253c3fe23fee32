// The writes of one event-loop turn in one transaction. A commit costs a
// write to the WAL file (20–35 µs here, more than the statement), and a busy
// /v1 issues many small writes in the same turn: the jobs that finished in one
// read of an agent, the polls of one read of a client's connection. Each
// write's promise settles only once the transaction that holds it committed,
// so what a caller does after `await` (answer a request, update what it keeps
// in memory) still follows the row on disk.
import { type Database, transaction } from "../store.ts";

interface Queued {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function attempt(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, error };
  }
}

export class TurnWrites {
  readonly #db: Database;
  #queue: Queued[] = [];

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Runs `write` (synchronous statements, no change of anything in memory)
   * with the other writes of this turn, once the turn ends; resolves with
   * what it returned once they committed, or rejects with what it threw.
   */
  add<R>(write: () => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.#queue.push({ run: write, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(() => this.#runTurn());
    });
  }

  #runTurn(): void {
    const queue = this.#queue;
    this.#queue = [];
    let outcomes: Outcome[];
    if (queue.length === 1) {
      outcomes = [attempt((queue[0] as Queued).run)];
    } else {
      try {
        // A statement that fails inside the transaction is undone alone; the others commit.
        outcomes = transaction(this.#db, () => queue.map((q) => attempt(q.run)));
      } catch {
        // The transaction failed as a whole (its commit, or an error that rolled it back): each write on its own.
        outcomes = queue.map((q) => attempt(q.run));
      }
    }
    queue.forEach((q, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) q.resolve(outcome.value);
      else q.reject(outcome.error);
    });
  }
}
