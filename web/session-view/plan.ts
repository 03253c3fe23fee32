// The agent's plan: each `plan` update replaces the whole list (ACP), drawn as
// a read-only checklist: completed entries checked, in-progress ones mixed.
import type { PlanEntry } from "@agentclientprotocol/sdk";
import { el, words } from "./dom.ts";

export class PlanPanel {
  readonly element: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly list: HTMLElement;

  constructor() {
    this.summary = el("summary", {}, "Plan");
    this.list = el("ul", { class: "sv-plan-list", "aria-label": "Plan" });
    this.element = el("details", { class: "sv-plan", open: true, hidden: true }, this.summary, this.list);
  }

  show(entries: PlanEntry[]): void {
    this.element.hidden = entries.length === 0;
    const done = entries.filter((e) => e.status === "completed").length;
    this.summary.textContent = `Plan (${done}/${entries.length} done)`;
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const box = el("input", { type: "checkbox", disabled: true, "aria-label": `${entry.content}: ${words(entry.status)}` });
        box.checked = entry.status === "completed";
        box.indeterminate = entry.status === "in_progress";
        return el(
          "li",
          { class: "sv-plan-entry", "data-status": entry.status, "data-priority": entry.priority },
          el("label", {}, box, el("span", { class: "sv-plan-text" }, entry.content)),
          el("span", { class: `sv-badge sv-status sv-status-${entry.status}` }, words(entry.status)),
        );
      }),
    );
  }
}
