// A permission request inline in the transcript, with the agent's own options
// as buttons. The first answer wins: once answered (here or by another
// client) or withdrawn, the buttons go and the outcome stays, in words that
// say who answered what ("Allowed on Pixel 8 — Allow once", "Rejected here")
// or why nobody did ("Withdrawn: the turn was stopped"). A replayed history
// brings the requests it settled as marks: they show as the card looked once
// settled.
//
// The change a request asks about shows here, next to the buttons that answer
// it: the request's own diffs, or else those of its tool call's card (which
// then points here instead of showing them twice).
import type { PermissionOption, RequestPermissionRequest, ToolCallContent } from "@agentclientprotocol/sdk";
import type { PermissionMark } from "../../protocol/history.ts";
import { type PermissionResolution, type PermissionVerdict, resolutionLabel, resolutionOfMark, verdictOf } from "../../protocol/permission-outcome.ts";
import type { PermissionRequestId, PermissionSettlement } from "./api.ts";
import { el } from "./dom.ts";
import type { CardActions } from "./editor-links.ts";
import { type DiffContent, diffsOf, renderToolContent } from "./tool-calls.ts";

export class PermissionCard {
  readonly element: HTMLElement;
  private readonly buttons: HTMLElement;
  private readonly outcome: HTMLElement;
  private body: HTMLElement;
  private chosen: PermissionOption | undefined;
  /** Diffs of the request's tool call card, shown when the request brings none of its own. */
  private borrowed: DiffContent[] = [];
  open = true;
  /** What came of the request, once settled. */
  verdict: PermissionVerdict | undefined;
  /** Told what came of the request once settled (the tool call's card marks a rejected change). */
  onVerdict: ((verdict: PermissionVerdict) => void) | undefined;

  readonly requestId: PermissionRequestId;
  readonly toolCallId: string;
  private readonly request: RequestPermissionRequest;
  private readonly answer: (optionId: string | null) => void;
  private readonly actions: CardActions;

  constructor(requestId: PermissionRequestId, request: RequestPermissionRequest, answer: (optionId: string | null) => void, actions: CardActions = {}) {
    this.requestId = requestId;
    this.toolCallId = request.toolCall.toolCallId;
    this.request = request;
    this.answer = answer;
    this.actions = actions;
    const title = request.toolCall.title ?? "a tool call";
    this.buttons = el("div", { class: "sv-perm-options", role: "group", "aria-label": "Answer" });
    for (const option of request.options) {
      const button = el("button", { type: "button", class: `sv-perm-option sv-${option.kind}`, "data-option-id": option.optionId }, option.name);
      button.addEventListener("click", () => this.choose(option));
      this.buttons.append(button);
    }
    this.outcome = el("div", { class: "sv-perm-outcome", role: "status" });
    this.body = this.renderBody();
    this.element = el(
      "section",
      // Focusable (not in the tab order), so a page that opens on it can move a screen reader there.
      { class: "sv-perm", "data-request-id": String(requestId), "aria-label": `Permission request: ${title}`, tabindex: -1 },
      el("div", { class: "sv-perm-title" }, el("strong", {}, "Permission: "), title),
      this.body,
      this.buttons,
      this.outcome,
    );
  }

  /** The card of a request a replayed history settled: its outcome, no buttons. */
  static settled(sessionId: string, mark: PermissionMark, actions: CardActions = {}): PermissionCard {
    const card = new PermissionCard("", { sessionId, toolCall: mark.toolCall, options: mark.options }, () => undefined, actions);
    card.resolve(resolutionOfMark(mark));
    return card;
  }

  /** The paths of the diffs this card shows. */
  get diffPaths(): ReadonlySet<string> {
    return new Set(this.diffs().map((d) => d.path));
  }

  /** The diffs of the request's tool call card: shown here when the request brought none of its own. */
  borrowDiffs(diffs: DiffContent[]): void {
    if (diffsOf(this.request.toolCall.content).length > 0) return;
    this.borrowed = diffs;
    const next = this.renderBody();
    this.body.replaceWith(next);
    this.body = next;
  }

  /** Answers as cancelled (the turn is being cancelled). */
  cancel(): void {
    if (!this.open) return;
    this.resolve({ by: "here" });
    this.answer(null);
  }

  /** The request is no longer open, or the host learnt more of how it was settled: the outcome is told (anew). */
  settle(how: PermissionSettlement): void {
    if (how === "answered here") this.resolve(this.chosen ? { optionId: this.chosen.optionId, by: "here" } : { by: "here" });
    else if (how === "answered elsewhere") this.close("Answered elsewhere", "answered elsewhere", undefined);
    else if (how === "withdrawn") this.resolve({});
    else this.resolve(how);
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

  private diffs(): DiffContent[] {
    const own = diffsOf(this.request.toolCall.content);
    return own.length > 0 ? own : this.borrowed;
  }

  private renderBody(): HTMLElement {
    const content: ToolCallContent[] = [...(this.request.toolCall.content ?? []), ...this.borrowed];
    if (content.length === 0) return el("div", { class: "sv-tool-content", hidden: true });
    // A replayed card (no id) answers nothing: its diff opens without answers.
    return renderToolContent(content, this.actions, { requestId: this.requestId === "" ? undefined : this.requestId });
  }

  private choose(option: PermissionOption): void {
    if (!this.open) return;
    this.chosen = option;
    this.resolve({ optionId: option.optionId, by: "here" });
    this.answer(option.optionId);
  }

  private resolve(resolution: PermissionResolution): void {
    const options = this.request.options;
    const verdict = verdictOf(resolution, options);
    const chosen = options.find((o) => o.optionId === resolution.optionId);
    if (chosen) this.chosen = chosen;
    const settled = verdict === "withdrawn" ? "withdrawn" : resolution.by === "here" ? "answered here" : "answered elsewhere";
    this.close(resolutionLabel(resolution, options), settled, verdict);
  }

  private close(text: string, settled: string, verdict: PermissionVerdict | undefined): void {
    // The button the person pressed goes with the others: the focus stays on the card, which reads its outcome.
    const focused = this.buttons.contains(document.activeElement);
    this.open = false;
    this.buttons.remove();
    this.outcome.textContent = text;
    this.element.dataset["settled"] = settled;
    this.verdict = verdict;
    if (verdict === undefined) delete this.element.dataset["verdict"];
    else this.element.dataset["verdict"] = verdict;
    if (focused) this.element.focus({ preventScroll: true });
    if (verdict !== undefined) this.onVerdict?.(verdict);
  }
}
