// One message of the transcript (user, agent or thought). Chunks append to a
// buffer; the scheduler re-renders only this message, at most once a frame.
// Past DEFAULT_MARKDOWN_MAX_CHARS the message is plain text, appended in place,
// and only DEFAULT_PLAIN_PREVIEW_CHARS of it are drawn until "Show all".
import { el, sizeLabel } from "./dom.ts";
import { DEFAULT_MARKDOWN_MAX_CHARS, DEFAULT_PLAIN_PREVIEW_CHARS } from "./limits.ts";
import { renderMarkdown } from "./markdown.ts";
import type { FrameScheduler, Renderable } from "./scheduler.ts";

export type MessageKind = "user" | "agent" | "thought";

const LABELS: Record<MessageKind, string> = { user: "You", agent: "Agent", thought: "Thinking" };

export class MessageBlock implements Renderable {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private chunks: string[] = [];
  private length = 0;
  private plain: { pre: HTMLPreElement; node: Text; shown: number; more: HTMLButtonElement | undefined } | undefined;
  private expanded = false;

  readonly kind: MessageKind;
  readonly messageId: string | undefined;
  private readonly scheduler: FrameScheduler;

  constructor(kind: MessageKind, messageId: string | undefined, scheduler: FrameScheduler) {
    this.kind = kind;
    this.messageId = messageId;
    this.scheduler = scheduler;
    this.body = el("div", { class: "sv-body", "aria-busy": "true" });
    if (kind === "thought") {
      this.element = el("details", { class: "sv-msg sv-thought" }, el("summary", {}, LABELS[kind]), this.body);
    } else {
      this.element = el("article", { class: `sv-msg sv-${kind}`, "aria-label": LABELS[kind] }, el("div", { class: "sv-who" }, LABELS[kind]), this.body);
    }
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.chunks.push(text);
    this.length += text.length;
    this.scheduler.mark(this);
  }

  /** The stream of this message is over (turn ended or another block began). */
  finish(): void {
    this.body.setAttribute("aria-busy", "false");
  }

  text(): string {
    if (this.chunks.length > 1) this.chunks = [this.chunks.join("")];
    return this.chunks[0] ?? "";
  }

  render(): void {
    if (this.length <= DEFAULT_MARKDOWN_MAX_CHARS) {
      this.body.replaceChildren(renderMarkdown(this.text()));
      return;
    }
    this.renderPlain();
  }

  private renderPlain(): void {
    if (!this.plain) {
      const node = document.createTextNode("");
      const pre = el("pre", { class: "sv-plain" }, node);
      this.plain = { pre, node, shown: 0, more: undefined };
      this.body.replaceChildren(pre);
    }
    const plain = this.plain;
    const limit = this.expanded ? this.length : Math.min(this.length, DEFAULT_PLAIN_PREVIEW_CHARS);
    if (plain.shown < limit) {
      plain.node.appendData(this.text().slice(plain.shown, limit));
      plain.shown = limit;
    }
    const hidden = this.length - plain.shown;
    if (hidden > 0) {
      if (!plain.more) {
        plain.more = el("button", { type: "button", class: "sv-show-all" });
        plain.more.addEventListener("click", () => {
          this.expanded = true;
          this.render();
        });
        this.body.append(plain.more);
      }
      plain.more.textContent = `Show all (${sizeLabel(hidden)} more)`;
    } else if (plain.more) {
      plain.more.remove();
      plain.more = undefined;
    }
  }
}
