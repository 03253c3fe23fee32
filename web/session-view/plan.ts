// The agent's plan: each `plan` update replaces the whole list (ACP). Folded,
// it is one line above the prompt box: the step the agent is on, "n of m";
// unfolded, a read-only checklist (completed entries checked, in-progress
// ones mixed). A turn that ends before the plan is done (cancelled, failed,
// or ended with steps left) leaves it stopped where it was, and the plan says
// so rather than "in progress", live and in a replay alike (the turn's end
// is a mark of the history).
import type { PlanEntry, StopReason } from "@agentclientprotocol/sdk";
import { el, words } from "./dom.ts";

/** How a turn ended, as the plan tells it: the agent's stop reason, or an error. */
export type TurnOutcome = StopReason | "error";

/** What the folded line says of a plan its turn left unfinished. */
const STOPPED: Partial<Record<TurnOutcome, string>> = { cancelled: "Cancelled", error: "Failed" };

export class PlanPanel {
  readonly element: HTMLDetailsElement;
  private readonly count: HTMLElement;
  private readonly current: HTMLElement;
  private readonly list: HTMLElement;
  private entries: PlanEntry[] = [];
  /** The turn ended with the plan unfinished. */
  private stopped: TurnOutcome | undefined;

  constructor() {
    this.count = el("span", { class: "sv-plan-count" });
    this.current = el("span", { class: "sv-plan-current" });
    this.list = el("ul", { class: "sv-plan-list", "aria-label": "Plan" });
    this.element = el(
      "details",
      { class: "sv-plan", hidden: true },
      // The spaces keep the words apart for a screen reader; the line's gap spaces them on screen.
      el("summary", {}, el("span", { class: "sv-plan-label" }, "Plan"), " ", this.count, " ", this.current),
      this.list,
    );
  }

  show(entries: PlanEntry[]): void {
    this.entries = entries;
    this.stopped = undefined;
    this.render();
  }

  /** The turn is over: a plan with steps left stops where it is. */
  turnEnded(outcome: TurnOutcome): void {
    if (this.entries.every((e) => e.status === "completed")) return;
    this.stopped = outcome;
    this.render();
  }

  private render(): void {
    const entries = this.entries;
    this.element.hidden = entries.length === 0;
    if (this.stopped === undefined) delete this.element.dataset["stopped"];
    else this.element.dataset["stopped"] = this.stopped;
    // The step the agent is on: the first in progress, else the next to do.
    let at = entries.findIndex((e) => e.status === "in_progress");
    if (at === -1) at = entries.findIndex((e) => e.status !== "completed");
    if (at === -1) {
      this.count.textContent = `${entries.length} of ${entries.length}`;
      this.current.textContent = "done";
    } else {
      const of = `${at + 1} of ${entries.length}`;
      this.count.textContent = this.stopped === undefined ? of : `${STOPPED[this.stopped] ?? "Stopped"} at ${of}`;
      this.current.textContent = entries[at]!.content;
    }
    this.list.replaceChildren(...entries.map((entry) => this.entry(entry)));
  }

  private entry(entry: PlanEntry): HTMLElement {
    // A step left in progress by a turn that is over is no longer running.
    const status = this.stopped !== undefined && entry.status === "in_progress" ? "stopped" : words(entry.status);
    const box = el("input", { type: "checkbox", disabled: true, "aria-label": `${entry.content}: ${status}` });
    box.checked = entry.status === "completed";
    box.indeterminate = entry.status === "in_progress" && this.stopped === undefined;
    return el(
      "li",
      { class: "sv-plan-entry", "data-status": entry.status, "data-priority": entry.priority },
      el("label", {}, box, el("span", { class: "sv-plan-text" }, entry.content)),
      el("span", { class: `sv-badge sv-status sv-status-${status === "stopped" ? "stopped" : entry.status}` }, status),
    );
  }
}
