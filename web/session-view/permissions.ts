// A permission request inline in the transcript, with the agent's own options
// as buttons. The first answer wins: once answered (here or by another
// client) or withdrawn, the buttons go and the outcome stays.
import type { PermissionOption, RequestPermissionRequest } from "@agentclientprotocol/sdk";
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
      { class: "sv-perm", "data-request-id": String(requestId), "aria-label": `Permission request: ${title}` },
      el("div", { class: "sv-perm-title" }, el("strong", {}, "Permission: "), title),
      request.toolCall.content?.length ? renderToolContent(request.toolCall.content) : null,
      this.buttons,
      this.outcome,
    );
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

  private choose(option: PermissionOption): void {
    if (!this.open) return;
    this.chosen = option;
    this.close(`Answered: ${option.name}`);
    this.element.dataset["settled"] = "chosen";
    this.answer(option.optionId);
  }

  private close(text: string): void {
    this.open = false;
    this.buttons.remove();
    this.outcome.textContent = text;
  }
}
