// A permission request inline in the transcript, with the agent's own options
// as buttons. The first answer wins: once answered (here or by another
// client) or withdrawn, the buttons go and the outcome stays. A replayed
// history brings the requests it settled as marks: they show as the card
// looked once settled.
import type { PermissionOption, RequestPermissionRequest } from "@agentclientprotocol/sdk";
import type { PermissionMark } from "../../protocol/history.ts";
import type { PermissionRequestId, PermissionSettlement } from "./api.ts";
import { el } from "./dom.ts";
import { renderToolContent } from "./tool-calls.ts";

export class PermissionCard {
  readonly element: HTMLElement;
  private readonly buttons: HTMLElement;
  private readonly outcome: HTMLElement;
  private chosen: PermissionOption | undefined;
  open = true;

  readonly requestId: PermissionRequestId;
  private readonly answer: (optionId: string | null) => void;

  constructor(requestId: PermissionRequestId, request: RequestPermissionRequest, answer: (optionId: string | null) => void) {
    this.requestId = requestId;
    this.answer = answer;
    const title = request.toolCall.title ?? "a tool call";
    this.buttons = el("div", { class: "sv-perm-options", role: "group", "aria-label": "Answer" });
    for (const option of request.options) {
      const button = el("button", { type: "button", class: `sv-perm-option sv-${option.kind}`, "data-option-id": option.optionId }, option.name);
      button.addEventListener("click", () => this.choose(option));
      this.buttons.append(button);
    }
    this.outcome = el("div", { class: "sv-perm-outcome", role: "status" });
    this.element = el(
      "section",
      // Focusable (not in the tab order), so a page that opens on it can move a screen reader there.
      { class: "sv-perm", "data-request-id": String(requestId), "aria-label": `Permission request: ${title}`, tabindex: -1 },
      el("div", { class: "sv-perm-title" }, el("strong", {}, "Permission: "), title),
      request.toolCall.content?.length ? renderToolContent(request.toolCall.content) : null,
      this.buttons,
      this.outcome,
    );
  }

  /** The card of a request a replayed history settled: its outcome, no buttons. */
  static settled(sessionId: string, mark: PermissionMark): PermissionCard {
    const card = new PermissionCard("", { sessionId, toolCall: mark.toolCall, options: mark.options }, () => undefined);
    const outcome = mark.outcome;
    const chosen = outcome.outcome === "selected" ? mark.options.find((o) => o.optionId === outcome.optionId) : undefined;
    if (chosen) {
      card.chosen = chosen;
      card.close(`Answered: ${chosen.name}`);
      card.element.dataset["settled"] = "chosen";
    } else if (mark.settledBy === "agent" || mark.settledBy === "timeout") {
      // Nobody answered: the agent gave up on it, or the wait ran out.
      card.settle("withdrawn");
    } else {
      card.close("Cancelled");
      card.element.dataset["settled"] = "cancelled";
    }
    return card;
  }

  /** Answers as cancelled (the turn is being cancelled). */
  cancel(): void {
    if (!this.open) return;
    this.close("Cancelled");
    this.element.dataset["settled"] = "cancelled";
    this.answer(null);
  }

  settle(how: PermissionSettlement): void {
    if (how === "answered here") this.close(this.chosen ? `Answered: ${this.chosen.name}` : "Answered");
    else if (how === "answered elsewhere") this.close("Answered elsewhere");
    else this.close("Withdrawn");
    this.element.dataset["settled"] = how;
  }

  focus(): void {
    this.buttons.querySelector("button")?.focus();
  }

  /**
   * Brings the card into view in its scrolling transcript, its answers too
   * when it is taller than the view, and focuses it (its label is what a
   * screen reader reads).
   */
  reveal(): void {
    this.element.scrollIntoView({ block: "nearest" });
    this.buttons.scrollIntoView({ block: "nearest" });
    this.element.focus({ preventScroll: true });
  }

  private choose(option: PermissionOption): void {
    if (!this.open) return;
    this.chosen = option;
    this.close(`Answered: ${option.name}`);
    this.element.dataset["settled"] = "chosen";
    this.answer(option.optionId);
  }

  private close(text: string): void {
    // The button the person pressed goes with the others: the focus stays on the card, which reads its outcome.
    const focused = this.buttons.contains(document.activeElement);
    this.open = false;
    this.buttons.remove();
    this.outcome.textContent = text;
    if (focused) this.element.focus({ preventScroll: true });
  }
}
