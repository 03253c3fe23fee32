// A tool call is one card, updated in place by its tool_call_update: kind,
// status, title and locations in its header, then its content (text as
// preformatted, diffs as line diffs, terminals by their id). An update that
// carries content replaces the content, as the protocol says.
import type { SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { contentText } from "./content.ts";
import { renderDiff } from "./diff.ts";
import { el, sizeLabel, words } from "./dom.ts";
import { DEFAULT_TOOL_TEXT_PREVIEW_CHARS } from "./limits.ts";

type ToolCallNotice = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

/** Preformatted text cut at `limit` characters with a "Show all" button. */
export function boundedPre(text: string, limit: number, cls: string): HTMLElement {
  const pre = el("pre", { class: cls }, text.length > limit ? text.slice(0, limit) : text);
  if (text.length <= limit) return pre;
  const more = el("button", { type: "button", class: "sv-show-all" }, `Show all (${sizeLabel(text.length - limit)} more)`);
  more.addEventListener("click", () => {
    pre.textContent = text;
    more.remove();
  });
  return el("div", {}, pre, more);
}

export function renderToolContent(content: ToolCallContent[]): HTMLElement {
  const box = el("div", { class: "sv-tool-content" });
  for (const item of content) {
    switch (item.type) {
      case "content":
        box.append(boundedPre(contentText(item.content), DEFAULT_TOOL_TEXT_PREVIEW_CHARS, "sv-tool-text"));
        break;
      case "diff":
        box.append(renderDiff(item.path, item.oldText, item.newText));
        break;
      case "terminal":
        box.append(el("div", { class: "sv-terminal", "data-terminal-id": item.terminalId }, `Terminal ${item.terminalId}`));
        break;
    }
  }
  return box;
}

function renderLocations(locations: ToolCallLocation[]): HTMLElement {
  const list = el("ul", { class: "sv-locations", "aria-label": "Locations" });
  for (const loc of locations) list.append(el("li", { class: "sv-path" }, loc.line != null ? `${loc.path}:${loc.line}` : loc.path));
  return list;
}

export class ToolCallCard {
  readonly element: HTMLElement;
  private readonly header: HTMLElement;
  private locations: HTMLElement;
  private content: HTMLElement;
  private state: { title: string; kind: string; status: string };

  readonly id: string;

  constructor(id: string) {
    this.id = id;
    this.state = { title: "Tool call", kind: "other", status: "pending" };
    this.header = el("div", { class: "sv-tool-head" });
    this.locations = el("ul", { class: "sv-locations", hidden: true });
    this.content = el("div", { class: "sv-tool-content" });
    this.element = el("section", { class: "sv-tool", "data-tool-call-id": id }, this.header, this.locations, this.content);
  }

  apply(update: ToolCallNotice | ToolCallUpdate): void {
    if (update.title != null) this.state.title = update.title;
    if (update.kind != null) this.state.kind = update.kind;
    if (update.status != null) this.state.status = update.status;
    const { title, kind, status } = this.state;
    this.element.dataset["status"] = status;
    this.element.dataset["kind"] = kind;
    this.element.setAttribute("aria-label", `${words(kind)} tool call: ${title}, ${words(status)}`);
    this.header.replaceChildren(
      el("span", { class: "sv-badge sv-kind" }, words(kind)),
      el("span", { class: "sv-tool-title" }, title),
      el("span", { class: `sv-badge sv-status sv-status-${status}` }, words(status)),
    );
    if (update.locations != null) {
      const next = renderLocations(update.locations);
      next.hidden = update.locations.length === 0;
      this.locations.replaceWith(next);
      this.locations = next;
    }
    if (update.content != null) {
      const next = renderToolContent(update.content);
      this.content.replaceWith(next);
      this.content = next;
    }
  }
}
