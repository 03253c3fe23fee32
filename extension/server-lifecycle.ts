// Which sidecar run is current, and the order of starts and stops: a start
// while one is in progress joins it (one run, one process), a stop waits for
// a start in progress and then ends its run. Free of `vscode` so the order is
// tested in plain Node.

/** One run of the server, as the lifecycle sees it. */
export interface ServerRun {
  /** Ends the run; resolves when its process is gone. */
  stop(): Promise<void>;
}

export class ServerLifecycle<R extends ServerRun> {
  readonly #launch: () => Promise<R | undefined>;
  #current: R | undefined;
  #starting: Promise<R | undefined> | undefined;
  #stopping: Promise<void> | undefined;

  /** `launch` starts one run; it answers undefined when the run did not start (and left nothing behind). */
  constructor(launch: () => Promise<R | undefined>) {
    this.#launch = launch;
  }

  /** The run that started and was not stopped. */
  get current(): R | undefined {
    return this.#current;
  }

  get isStarting(): boolean {
    return this.#starting !== undefined;
  }

  /** Starts a run unless one runs or is starting; a start in progress is joined, not repeated. */
  start(): Promise<R | undefined> {
    // The current run counts only when no stop is ending it.
    if (this.#current && !this.#stopping) return Promise.resolve(this.#current);
    this.#starting ??= (async () => {
      try {
        // A stop in progress ends its run first: two runs never overlap.
        await this.#stopping;
        this.#current = await this.#launch();
        return this.#current;
      } finally {
        this.#starting = undefined;
      }
    })();
    return this.#starting;
  }

  /** Ends the current run, after the start in progress (and the stop before) if there is one. */
  stop(): Promise<void> {
    const previous = this.#stopping;
    const starting = this.#starting;
    const stopping = (async () => {
      await previous;
      await starting?.catch(() => undefined);
      const run = this.#current;
      this.#current = undefined;
      await run?.stop();
    })();
    this.#stopping = stopping;
    void stopping.finally(() => {
      if (this.#stopping === stopping) this.#stopping = undefined;
    }).catch(() => undefined);
    return stopping;
  }

  /** Forgets a run that ended by itself (it gave up after crashes), so that the next start launches a new one. */
  ended(run: R): void {
    if (this.#current === run) this.#current = undefined;
  }
}
