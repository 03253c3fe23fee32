// A tool call is one card, updated in place by its tool_call_update: kind,
// status, title and locations in its header, then its content (text as
// Markdown, diffs as line diffs, terminals by their id). An update that
// carries content replaces the content, as the protocol says.
//
// A diff a permission request asks about shows once, in the request's card,
// next to the buttons that answer it: the tool card points there instead
// (deferDiffs). A call whose change was rejected, or that failed, says so in
// its badge, and its diff is struck through.
import type { SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { toolCallInterruption } from "../../protocol/history.ts";
import type { PermissionVerdict } from "../../protocol/permission-outcome.ts";
import type { PermissionRequestId } from "./api.ts";
import { contentText } from "./content.ts";
import { renderDiff } from "./diff.ts";
import { el, sizeLabel, words } from "./dom.ts";
import { type CardActions, pathElement } from "./editor-links.ts";
import { DEFAULT_TOOL_MARKDOWN_MAX_CHARS, DEFAULT_TOOL_TEXT_PREVIEW_CHARS } from "./limits.ts";
import { renderMarkdown } from "./markdown.ts";

type ToolCallNotice = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

export type DiffContent = Extract<ToolCallContent, { type: "diff" }>;

/** The diffs among a tool call's content. */
export function diffsOf(content: readonly ToolCallContent[] | null | undefined): DiffContent[] {
  return (content ?? []).filter((item): item is DiffContent => item.type === "diff");
}

/** Preformatted text cut at `limit` characters with a "Show all" button. */
function boundedPre(text: string, limit: number, cls: string): HTMLElement {
  const pre = el("pre", { class: cls }, text.length > limit ? text.slice(0, limit) : text);
  if (text.length <= limit) return pre;
  const more = el("button", { type: "button", class: "sv-show-all" }, `Show all (${sizeLabel(text.length - limit)} more)`);
  more.addEventListener("click", () => {
    pre.textContent = text;
    more.remove();
  });
  return el("div", {}, pre, more);
}

/**
 * A tool's text output. Agents write it as Markdown (a command's output in a
 * ``` fence, an error with its message): it is drawn as Markdown, like their
 * messages; a long one as preformatted text, cut until "Show all".
 */
function toolText(text: string): HTMLElement {
  if (text.length > DEFAULT_TOOL_MARKDOWN_MAX_CHARS) return boundedPre(text, DEFAULT_TOOL_TEXT_PREVIEW_CHARS, "sv-tool-text");
  const box = el("div", { class: "sv-tool-text sv-body" });
  box.append(renderMarkdown(text));
  return box;
}

/** Where a tool card's diffs show instead of in it: the card of the permission request that asks about them. */
export interface DiffHome {
  element: HTMLElement;
  /** The paths of the diffs it shows. */
  paths: ReadonlySet<string>;
}

/** In place of a diff a permission request shows: the file, and a button that goes to the request. */
function diffReference(diff: DiffContent, home: HTMLElement, actions: CardActions): HTMLElement {
  const go = el("button", { type: "button", class: "sv-diff-ref-go" }, "Show");
  go.addEventListener("click", () => {
    home.scrollIntoView({ block: "nearest" });
    home.focus({ preventScroll: true });
  });
  return el("div", { class: "sv-diff-ref", "data-path": diff.path }, "Proposed change to ", pathElement(actions, diff.path, undefined), ", shown with the permission request ", go);
}

/**
 * A tool call's content. `diffHome`: the permission request's card that shows
 * some of its diffs instead; `requestId`: the open request these diffs belong
 * to (drawn in its card), for the diff editor's answers.
 */
export function renderToolContent(content: readonly ToolCallContent[], actions: CardActions, where: { diffHome?: DiffHome | undefined; requestId?: PermissionRequestId | undefined } = {}): HTMLElement {
  const { diffHome, requestId } = where;
  const box = el("div", { class: "sv-tool-content" });
  for (const item of content) {
    switch (item.type) {
      case "content":
        box.append(toolText(contentText(item.content)));
        break;
      case "diff":
        box.append(diffHome?.paths.has(item.path) ? diffReference(item, diffHome.element, actions) : renderDiff(item, actions, requestId));
        break;
      case "terminal":
        box.append(el("div", { class: "sv-terminal", "data-terminal-id": item.terminalId }, `Terminal ${item.terminalId}`));
        break;
    }
  }
  return box;
}

function renderLocations(locations: ToolCallLocation[], actions: CardActions): HTMLElement {
  const list = el("ul", { class: "sv-locations", "aria-label": "Locations" });
  for (const loc of locations) list.append(el("li", {}, pathElement(actions, loc.path, loc.line ?? undefined)));
  return list;
}

/** The words of a status badge; a change the person rejected says so rather than "failed". */
function badge(status: string, verdict: PermissionVerdict | undefined): { text: string; cls: string } {
  if (verdict === "rejected" && status !== "interrupted") return { text: "rejected", cls: "rejected" };
  return { text: words(status), cls: status };
}

export class ToolCallCard {
  readonly element: HTMLElement;
  private readonly header: HTMLElement;
  private locations: HTMLElement;
  private content: HTMLElement;
  private state: { title: string; kind: string; status: string };
  /** The latest content, drawn again when where its diffs show changes. */
  private latest: ToolCallContent[] = [];
  private diffHome: DiffHome | undefined;
  private verdict: PermissionVerdict | undefined;
  /** Told the diffs of each new content (a permission card without its own shows these). */
  onDiffs: ((diffs: DiffContent[]) => void) | undefined;

  readonly id: string;
  private readonly actions: CardActions;

  constructor(id: string, actions: CardActions = {}) {
    this.id = id;
    this.actions = actions;
    this.state = { title: "Tool call", kind: "other", status: "pending" };
    this.header = el("div", { class: "sv-tool-head" });
    this.locations = el("ul", { class: "sv-locations", hidden: true });
    this.content = el("div", { class: "sv-tool-content" });
    this.element = el("section", { class: "sv-tool", "data-tool-call-id": id }, this.header, this.locations, this.content);
  }

  /** The diffs of its latest content. */
  get diffs(): DiffContent[] {
    return diffsOf(this.latest);
  }

  apply(update: ToolCallNotice | ToolCallUpdate): void {
    if (update.title != null) this.state.title = update.title;
    if (update.kind != null) this.state.kind = update.kind;
    // A tool call a turn's interruption ended (protocol/history.ts) says so, not merely "failed".
    if (update.status != null) this.state.status = toolCallInterruption(update) === undefined ? update.status : "interrupted";
    this.drawHeader();
    if (update.locations != null) {
      const next = renderLocations(update.locations, this.actions);
      next.hidden = update.locations.length === 0;
      this.locations.replaceWith(next);
      this.locations = next;
    }
    if (update.content != null) {
      this.latest = update.content;
      this.drawContent();
      this.onDiffs?.(this.diffs);
    }
  }

  /** The diffs of these paths show in the permission request's card (`home`); undefined shows them here again. */
  deferDiffs(home: DiffHome | undefined): void {
    this.diffHome = home;
    this.drawContent();
  }

  /** What the permission request about this call came to: a rejected change is marked so. */
  setVerdict(verdict: PermissionVerdict): void {
    this.verdict = verdict;
    this.drawHeader();
  }

  private drawHeader(): void {
    const { title, kind, status } = this.state;
    const shown = badge(status, this.verdict);
    this.element.dataset["status"] = status;
    this.element.dataset["kind"] = kind;
    if (this.verdict === undefined) delete this.element.dataset["verdict"];
    else this.element.dataset["verdict"] = this.verdict;
    this.element.setAttribute("aria-label", `${words(kind)} tool call: ${title}, ${shown.text}`);
    this.header.replaceChildren(
      el("span", { class: "sv-badge sv-kind" }, words(kind)),
      el("span", { class: "sv-tool-title" }, title),
      el("span", { class: `sv-badge sv-status sv-status-${shown.cls}` }, shown.text),
    );
  }

  private drawContent(): void {
    const next = renderToolContent(this.latest, this.actions, { diffHome: this.diffHome });
    this.content.replaceWith(next);
    this.content = next;
  }
}
