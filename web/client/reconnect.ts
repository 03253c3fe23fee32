// Reconnection after the link dropped: attempts spaced by a growing wait, and
// an attempt at once when the network comes back (`online`), the page becomes
// visible (the phone wakes, the tab comes to the front) or is shown again
// from the browser's back-forward cache (`pageshow`), since those are the
// moments a drop usually ends. While the page is visible the wait stays short
// (someone is looking at it); hidden, it grows further, to spare the battery.
import { DEFAULT_RECONNECT_FACTOR, DEFAULT_RECONNECT_INITIAL_MS, DEFAULT_RECONNECT_MAX_MS, DEFAULT_RECONNECT_VISIBLE_MAX_MS } from "./limits.ts";

/** One attempt: resolves true when the link is back, false to try again later. */
export type Attempt = () => Promise<boolean>;

export class Reconnector {
  readonly #attempt: Attempt;
  #wait = DEFAULT_RECONNECT_INITIAL_MS;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #active = false;
  #running = false;

  constructor(attempt: Attempt) {
    this.#attempt = attempt;
  }

  /** Starts trying until an attempt succeeds or `stop()`. */
  start(): void {
    if (this.#active) return;
    this.#active = true;
    this.#wait = DEFAULT_RECONNECT_INITIAL_MS;
    addEventListener("online", this.#wake);
    addEventListener("pageshow", this.#wake);
    document.addEventListener("visibilitychange", this.#wake);
    this.#later();
  }

  stop(): void {
    this.#active = false;
    clearTimeout(this.#timer);
    removeEventListener("online", this.#wake);
    removeEventListener("pageshow", this.#wake);
    document.removeEventListener("visibilitychange", this.#wake);
  }

  readonly #wake = (): void => {
    if (!this.#active || document.visibilityState !== "visible") return;
    this.#wait = DEFAULT_RECONNECT_INITIAL_MS;
    clearTimeout(this.#timer);
    void this.#try();
  };

  #later(): void {
    clearTimeout(this.#timer);
    const max = document.visibilityState === "visible" ? DEFAULT_RECONNECT_VISIBLE_MAX_MS : DEFAULT_RECONNECT_MAX_MS;
    const wait = Math.min(this.#wait, max);
    this.#timer = setTimeout(() => void this.#try(), wait);
    this.#wait = Math.min(wait * DEFAULT_RECONNECT_FACTOR, DEFAULT_RECONNECT_MAX_MS);
  }

  async #try(): Promise<void> {
    if (!this.#active || this.#running) return;
    this.#running = true;
    let ok = false;
    try {
      ok = await this.#attempt();
    } catch {
      ok = false;
    } finally {
      this.#running = false;
    }
    if (!this.#active) return;
    if (ok) this.stop();
    else this.#later();
  }
}
