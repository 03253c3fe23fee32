// The prompt box. Enter sends, Shift+Enter breaks the line, Esc cancels the
// running turn. Typing "/" at the start offers the agent's slash commands
// (from available_commands_update) as a listbox: arrows move, Enter or Tab
// picks, Esc closes the list first. While the session cannot take a prompt,
// a line above the box says why (with what to do about it), Send is disabled
// and the text stays in the box.
import type { AvailableCommand } from "@agentclientprotocol/sdk";
import type { Unavailable } from "./api.ts";
import { el } from "./dom.ts";
import { DEFAULT_COMPLETION_MAX_ITEMS } from "./limits.ts";

export interface ComposerActions {
  send(text: string): void;
  cancel(): void;
  /** The text in the box changed (typed, sent, picked or set), for a host that keeps drafts. */
  draftChanged(text: string): void;
}

let nextId = 0;

export class Composer {
  readonly element: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly list: HTMLElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private commands: AvailableCommand[] = [];
  private matches: AvailableCommand[] = [];
  private active = 0;
  private busy = false;
  /** Not connected: Send would lose the text, so it stays in the box until the link is back. */
  private offline = false;
  /** Why the session takes no prompt now (the host says); the text stays in the box until it does. */
  private unavailable: Unavailable | undefined;
  private readonly notice: HTMLElement;
  private readonly prefix = `sv-${++nextId}`;

  private readonly actions: ComposerActions;

  constructor(actions: ComposerActions) {
    this.actions = actions;
    const listId = `${this.prefix}-commands`;
    this.input = el("textarea", {
      class: "sv-input",
      rows: 2,
      placeholder: "Message the agent — / for commands",
      "aria-label": "Message",
      role: "combobox",
      "aria-autocomplete": "list",
      "aria-controls": listId,
      "aria-expanded": "false",
      enterkeyhint: "send",
    });
    this.list = el("ul", { class: "sv-completions", id: listId, role: "listbox", "aria-label": "Commands", hidden: true });
    this.sendButton = el("button", { type: "submit", class: "sv-send" }, "Send");
    this.stopButton = el("button", { type: "button", class: "sv-stop", hidden: true }, "Stop");
    const noticeId = `${this.prefix}-unavailable`;
    this.notice = el("div", { class: "sv-unavailable", id: noticeId, role: "status", hidden: true });
    this.input.setAttribute("aria-describedby", noticeId);
    this.element = el("form", { class: "sv-composer", "aria-label": "Prompt" }, this.notice, this.list, this.input, el("div", { class: "sv-actions" }, this.stopButton, this.sendButton));
    this.element.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    this.stopButton.addEventListener("click", () => this.actions.cancel());
    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.input.addEventListener("input", () => {
      this.complete();
      this.actions.draftChanged(this.input.value);
    });
    this.list.addEventListener("mousedown", (e) => e.preventDefault());
    this.list.addEventListener("click", (e) => {
      const item = (e.target as Element).closest("[data-index]");
      if (item instanceof HTMLElement) this.pick(Number(item.dataset["index"]));
    });
  }

  setCommands(commands: AvailableCommand[]): void {
    this.commands = commands;
    this.complete();
  }

  /** Puts a kept draft in the box; what the person typed since is replaced. */
  setDraft(text: string): void {
    this.input.value = text;
    this.complete();
    this.actions.draftChanged(text);
  }

  setBusy(busy: boolean): void {
    // Stop goes when the turn ends; the focus it had goes to Send, in its place, not to the page's top.
    const stopFocused = !busy && document.activeElement === this.stopButton;
    this.busy = busy;
    this.stopButton.hidden = !busy;
    this.updateSend();
    if (stopFocused) (this.sendButton.disabled ? this.input : this.sendButton).focus({ preventScroll: true });
  }

  /** While offline, Send is disabled and Enter keeps the text where it is. */
  setOffline(offline: boolean): void {
    this.offline = offline;
    this.updateSend();
  }

  /** While the session takes no prompt, the reason shows above the box, Send is disabled and Enter keeps the text. */
  setUnavailable(unavailable: Unavailable | undefined): void {
    this.unavailable = unavailable;
    this.element.dataset["unavailable"] = String(unavailable !== undefined);
    this.notice.hidden = unavailable === undefined;
    if (unavailable === undefined) {
      this.notice.replaceChildren();
    } else {
      const action = unavailable.action;
      const button = action ? el("button", { type: "button", class: "sv-unavailable-action" }, action.label) : null;
      button?.addEventListener("click", () => action?.run());
      this.notice.replaceChildren(el("span", {}, unavailable.reason), ...(button ? [button] : []));
    }
    this.updateSend();
  }

  private updateSend(): void {
    this.sendButton.disabled = this.busy || this.offline || this.unavailable !== undefined;
    this.sendButton.title = this.unavailable
      ? `${this.unavailable.reason} Your message stays here.`
      : this.offline
        ? "Not connected: your message stays here until the link is back"
        : "";
  }

  private submit(): void {
    const text = this.input.value;
    if (this.busy || this.offline || this.unavailable !== undefined || text.trim() === "") return;
    this.input.value = "";
    this.complete();
    this.actions.draftChanged("");
    this.actions.send(text);
  }

  private onKey(e: KeyboardEvent): void {
    if (e.isComposing) return;
    const open = !this.list.hidden;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      this.setActive(this.active + (e.key === "ArrowDown" ? 1 : -1));
    } else if (open && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey))) {
      e.preventDefault();
      this.pick(this.active);
    } else if (open && e.key === "Escape") {
      e.preventDefault();
      this.close();
    } else if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      this.submit();
    } else if (e.key === "Escape" && this.busy) {
      e.preventDefault();
      this.actions.cancel();
    }
  }

  /** Offers the commands whose name starts with what follows "/" (until the first space). */
  private complete(): void {
    const match = /^\/(\S*)$/.exec(this.input.value);
    if (!match || this.commands.length === 0) return this.close();
    const typed = match[1]!.toLowerCase();
    this.matches = this.commands.filter((c) => c.name.toLowerCase().startsWith(typed)).slice(0, DEFAULT_COMPLETION_MAX_ITEMS);
    if (this.matches.length === 0) return this.close();
    this.list.replaceChildren(
      ...this.matches.map((c, i) =>
        el(
          "li",
          { id: `${this.prefix}-cmd-${i}`, role: "option", class: "sv-completion", "data-index": i, "data-name": c.name, "aria-selected": "false" },
          el("span", { class: "sv-cmd-name" }, `/${c.name}`),
          el("span", { class: "sv-muted" }, ` ${c.description}`),
        ),
      ),
    );
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.setActive(0);
  }

  private setActive(index: number): void {
    const n = this.matches.length;
    this.active = ((index % n) + n) % n;
    for (const item of Array.from(this.list.children)) item.setAttribute("aria-selected", "false");
    const current = this.list.children[this.active];
    current?.setAttribute("aria-selected", "true");
    if (current) this.input.setAttribute("aria-activedescendant", current.id);
  }

  private pick(index: number): void {
    const command = this.matches[index];
    if (!command) return;
    this.input.value = `/${command.name} `;
    this.close();
    this.actions.draftChanged(this.input.value);
    this.input.focus();
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
  }

  private close(): void {
    this.list.hidden = true;
    this.list.replaceChildren();
    this.matches = [];
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}
