// Deferred completions in the embedded store (the JobStore of
// ../shared-store.ts, design: Deferred completions, decisions 2 and 3): one
// row a job (table v1_jobs, made by ./schema.ts), deleted once older than the
// TTL (spec: Limits 2) whatever its state. Writes are synchronous SQLite
// statements, so a state a response reports is on disk before the response
// leaves.
//
// Retrieval is exactly once (spec: Limits 1) because it is one statement,
// `DELETE ... RETURNING`, guarded by the state: of any number of concurrent
// takes, in this process or another on the same file, one deletes the row and
// gets it, the others find nothing.
//
// Under load: the writes of one event-loop turn (submissions, claims,
// finished jobs, retrievals) go in one transaction (turn-writes.ts; each still
// resolves only once its row is committed), and a poll of a job this process
// knows to be pending or running, or knows it deleted, is answered from
// memory, without a statement. One process owns the file (`recover` relies on
// it too): every change of a job's state goes through this process, so what
// it knows is what the file says.
import { randomUUID } from "node:crypto";
import type { StatementSync } from "node:sqlite";
import { DEFAULT_V1_GONE_IDS_KEPT } from "../../limits.ts";
import { type Database, preparedStatements } from "../store.ts";
import type { Job, JobState, JobStore, Removed, Retrieval } from "../shared-store.ts";
import { TurnWrites } from "./turn-writes.ts";

interface Row {
  [key: string]: unknown;
}

const ACTIVE: ReadonlySet<string> = new Set(["pending", "running"]);

/** A job this process knows to be pending or running, and whose. */
interface Known {
  owner: string;
  createdAt: number;
  state: "pending" | "running";
}

/**
 * What this process knows of the jobs of a database: the active ones, and the
 * latest ids whose row it deleted (retrieved, cancelled, expired; ids are
 * never used again, so they stay gone). Every job store on one database in
 * this process shares it, as they share the rows.
 */
interface Knowledge {
  active: Map<string, Known>;
  /** Oldest first, at most DEFAULT_V1_GONE_IDS_KEPT. */
  gone: Set<string>;
}

const knowledgeByDatabase = new WeakMap<Database, Knowledge>();

export class SqliteJobStore implements JobStore {
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #sql: (text: string) => StatementSync;
  /** Jobs pending or running per owner, counted once and then kept in memory: a submission does not count rows. */
  #active: Map<string, number> | undefined;
  readonly #known: Map<string, Known>;
  readonly #gone: Set<string>;
  readonly #writes: TurnWrites;

  constructor(db: Database, options: { clock: () => number; ttlMs: number }) {
    this.#sql = preparedStatements(db);
    this.#writes = new TurnWrites(db);
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    let knowledge = knowledgeByDatabase.get(db);
    if (knowledge === undefined) {
      knowledge = { active: new Map(), gone: new Set() };
      knowledgeByDatabase.set(db, knowledge);
    }
    this.#known = knowledge.active;
    this.#gone = knowledge.gone;
  }

  #counts(): Map<string, number> {
    if (this.#active === undefined) {
      const rows = this.#sql("SELECT owner, count(*) AS n FROM v1_jobs WHERE state IN ('pending', 'running') GROUP BY owner").all() as Row[];
      this.#active = new Map(rows.map((r) => [String(r["owner"]), Number(r["n"])]));
    }
    return this.#active;
  }

  #changeActive(owner: string, delta: number): void {
    // Not counted yet (a fresh store, or just after recover): the count read
    // later sees the row already changed, so changing it here would count it twice.
    if (this.#active === undefined) return;
    const counts = this.#active;
    const n = (counts.get(owner) ?? 0) + delta;
    if (n > 0) counts.set(owner, n);
    else counts.delete(owner);
  }


  /** Rows older than this were created more than the TTL ago: expired. */
  #horizon(): number {
    return this.#clock() - this.#ttlMs;
  }

  /** Jobs cut off by a crash of the one process on this file: every running row. */
  async recover(maxAttempts: number, body: unknown): Promise<number> {
    this
      .#sql("UPDATE v1_jobs SET state = 'failed', status = 500, result = ? WHERE state = 'running' AND attempts >= ?")
      .run(JSON.stringify(body), maxAttempts);
    const back = this.#sql("UPDATE v1_jobs SET state = 'pending' WHERE state = 'running'").run();
    this.#active = undefined;
    // States changed behind what this process knew: it starts over from the rows.
    this.#known.clear();
    return Number(back.changes);
  }

  async pendingBackends(): Promise<string[]> {
    return (this.#sql("SELECT backend FROM v1_jobs WHERE state = 'pending' GROUP BY backend").all() as Row[]).map((r) => String(r["backend"]));
  }

  /**
   * Counted at once (the check and the count are one step for the turn's
   * other submissions), written with the turn's other writes in one
   * transaction; resolves once that transaction committed.
   */
  async insert(owner: string, backend: string, model: string, request: unknown, maxActive: number): Promise<string | undefined> {
    if ((this.#counts().get(owner) ?? 0) >= maxActive) return undefined;
    const id = randomUUID();
    const createdAt = this.#clock();
    const values = [id, owner, backend, model, JSON.stringify(request), createdAt] as const;
    this.#changeActive(owner, +1);
    try {
      await this.#writes.add(() => this.#sql("INSERT INTO v1_jobs (id, owner, backend, model, request, state, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)").run(...values));
    } catch (error) {
      this.#changeActive(owner, -1);
      throw error;
    }
    this.#known.set(id, { owner, createdAt, state: "pending" });
    return id;
  }

  /** The row of `id` was deleted here: it stays gone (the oldest such ids are forgotten past the bound). */
  #deleted(id: string): void {
    this.#known.delete(id);
    this.#gone.add(id);
    if (this.#gone.size > DEFAULT_V1_GONE_IDS_KEPT) this.#gone.delete(this.#gone.values().next().value as string);
  }

  /** What this process knows of an active job of `owner` that has not expired. */
  #knownActive(owner: string, id: string): Known | undefined {
    const known = this.#known.get(id);
    return known !== undefined && known.owner === owner && known.createdAt > this.#horizon() ? known : undefined;
  }

  async take(owner: string, id: string): Promise<Retrieval> {
    // Most polls find the job still pending or running: one this process
    // knows is answered from memory. Only a finished job goes on to the
    // guarded DELETE, one statement, so of concurrent takes (in this process
    // or another on the same file) one deletes the row and gets it, the
    // others find nothing.
    if (this.#knownActive(owner, id) !== undefined) return { kind: "pending" };
    if (this.#gone.has(id)) return { kind: "gone" };
    const horizon = this.#horizon();
    const row = this.#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?").get(id, owner, horizon) as Row | undefined;
    if (!row) return { kind: "gone" };
    if (ACTIVE.has(String(row["state"]))) return { kind: "pending" };
    const taken = await this.#writes.add(() => this
      .#sql("DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND state IN ('done', 'failed') AND created_at > ? RETURNING status, result")
      .get(id, owner, horizon) as Row | undefined);
    // Deleted now, or by another take since the read (retrieved once, by that one): gone for good.
    this.#deleted(id);
    if (!taken) return { kind: "gone" };
    return { kind: "ready", status: Number(taken["status"]), body: JSON.parse(String(taken["result"])) };
  }

  async state(owner: string, id: string): Promise<JobState | undefined> {
    const known = this.#knownActive(owner, id);
    if (known !== undefined) return known.state;
    if (this.#gone.has(id)) return undefined;
    const row = this
      .#sql("SELECT state FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ?")
      .get(id, owner, this.#horizon()) as Row | undefined;
    return row ? (row["state"] as JobState) : undefined;
  }

  async delete(owner: string, id: string): Promise<Removed | undefined> {
    if (this.#gone.has(id)) return undefined;
    const horizon = this.#horizon();
    const row = await this.#writes.add(() => this.#sql("DELETE FROM v1_jobs WHERE id = ? AND owner = ? AND created_at > ? RETURNING state").get(id, owner, horizon) as Row | undefined);
    if (!row) return undefined;
    this.#deleted(id);
    const removed = { id, owner, active: ACTIVE.has(String(row["state"])) };
    if (removed.active) this.#changeActive(owner, -1);
    return removed;
  }

  async expire(): Promise<Removed[]> {
    const rows = this.#sql("DELETE FROM v1_jobs WHERE created_at <= ? RETURNING id, owner, state").all(this.#horizon()) as Row[];
    const removed = rows.map((r) => ({ id: String(r["id"]), owner: String(r["owner"]), active: ACTIVE.has(String(r["state"])) }));
    for (const r of removed) {
      this.#deleted(r.id);
      if (r.active) this.#changeActive(r.owner, -1);
    }
    return removed;
  }

  async claim(backend: string): Promise<Job | undefined> {
    const horizon = this.#horizon();
    const claimed = await this.#writes.add(() => this
      .#sql(
        "UPDATE v1_jobs SET state = 'running', attempts = attempts + 1 WHERE id = " +
          "(SELECT id FROM v1_jobs WHERE state = 'pending' AND backend = ? AND created_at > ? ORDER BY created_at, rowid LIMIT 1) " +
          "RETURNING id, owner, backend, model, request, created_at, attempts",
      )
      .get(backend, horizon) as Row | undefined);
    if (!claimed) return undefined;
    // Claimed here: running, whoever submitted it (a job left from before a restart too).
    this.#known.set(String(claimed["id"]), { owner: String(claimed["owner"]), createdAt: Number(claimed["created_at"]), state: "running" });
    return {
      id: String(claimed["id"]),
      owner: String(claimed["owner"]),
      backend,
      model: String(claimed["model"]),
      request: String(claimed["request"]),
      createdAt: Number(claimed["created_at"]),
      attempts: Number(claimed["attempts"]),
    };
  }

  async finish(id: string, state: "done" | "failed", status: number, body: unknown): Promise<boolean> {
    const result = JSON.stringify(body);
    const row = await this.#writes.add(() => this
      .#sql("UPDATE v1_jobs SET state = ?, status = ?, result = ? WHERE id = ? AND state = 'running' RETURNING owner")
      .get(state, status, result, id) as Row | undefined);
    // Finished, or no longer running (cancelled, expired): not active either way.
    this.#known.delete(id);
    if (!row) return false;
    this.#changeActive(String(row["owner"]), -1);
    return true;
  }

  async release(id: string): Promise<void> {
    const released = await this.#writes.add(() => this.#sql("UPDATE v1_jobs SET state = 'pending', attempts = max(attempts - 1, 0) WHERE id = ? AND state = 'running'").run(id));
    const known = this.#known.get(id);
    if (known !== undefined && Number(released.changes) > 0) known.state = "pending";
  }
}
