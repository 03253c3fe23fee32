// Earlier turns of a session whose replay brought only its latest ones (a
// host that has the history in pages: docs/transport.md, "Pages of a
// replay"). Above the transcript, a button says that there is more; pressing
// it, or scrolling up to it, asks the host for the turns before, which are
// drawn above what is shown, the reader's place kept. While what is shown
// does not fill the screen (short turns), the turns before come at once. They are drawn as a
// replay draws them (messages, tool calls, settled permission requests, turn
// ends, errors, notices); the session's state (plan, mode, commands, title,
// busy) is the latest turns' already. They sit outside the transcript's live
// region, so a screen reader does not read them out as new.
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { readMark } from "../../protocol/history.ts";
import type { EarlierPage } from "./api.ts";
import { el } from "./dom.ts";
import type { CardActions } from "./editor-links.ts";
import { DEFAULT_EARLIER_TRIGGER_PX } from "./limits.ts";
import { PermissionCard } from "./permissions.ts";
import { FrameScheduler } from "./scheduler.ts";
import { Transcript } from "./transcript.ts";

const LABEL = "Show earlier messages";

export class EarlierTurns {
  /** Holds the button and the earlier turns; the host of the view puts it above the transcript, in its scroller. */
  readonly element: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly turns: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly load: () => Promise<EarlierPage>;
  private readonly actions: CardActions;
  private more = false;
  private loading = false;
  private disposed = false;

  constructor(scroller: HTMLElement, load: () => Promise<EarlierPage>, actions: CardActions = {}) {
    this.scroller = scroller;
    this.load = load;
    this.actions = actions;
    this.button = el("button", { type: "button", class: "sv-earlier-more" }, LABEL);
    this.button.addEventListener("click", () => void this.loadPage());
    this.turns = el("div", { class: "sv-earlier-turns" });
    this.element = el("section", { class: "sv-earlier", "aria-label": "Earlier messages", hidden: true }, this.button, this.turns);
    scroller.addEventListener("scroll", this.onScroll, { passive: true });
  }

  /** Whether turns come before those shown. */
  show(more: boolean): void {
    this.more = more;
    this.button.hidden = !more;
    this.element.hidden = !more && this.turns.childElementCount === 0;
    // Once the view has drawn what it has (and gone to its end), in the frame after.
    if (more) requestAnimationFrame(() => requestAnimationFrame(() => this.onScroll()));
  }

  dispose(): void {
    this.disposed = true;
    this.scroller.removeEventListener("scroll", this.onScroll);
  }

  /** The person scrolled up to the button, or the turns shown do not fill the screen: the page before comes without a press. */
  private readonly onScroll = (): void => {
    if (this.more && !this.loading && !this.disposed && this.scroller.scrollTop <= DEFAULT_EARLIER_TRIGGER_PX) void this.loadPage();
  };

  private async loadPage(): Promise<void> {
    if (this.loading || !this.more) return;
    this.loading = true;
    this.button.disabled = true;
    this.button.textContent = "Loading earlier messages…";
    try {
      const page = await this.load();
      if (this.disposed) return;
      this.prepend(page.notifications);
      this.button.textContent = LABEL;
      this.show(page.more);
    } catch (error) {
      if (this.disposed) return;
      this.button.textContent = `Earlier messages could not be loaded (${error instanceof Error ? error.message : String(error)}). Try again`;
    } finally {
      this.loading = false;
      this.button.disabled = false;
    }
  }

  /** Draws the turns above those shown, the reader kept where they were. */
  private prepend(notifications: readonly SessionNotification[]): void {
    // Rendered now, whole, apart from the view's own frames (which would count them as new below).
    const scheduler = new FrameScheduler();
    const part = new Transcript(scheduler, this.actions);
    for (const notification of notifications) {
      // As the view does: an update it cannot draw shows as an error, and the rest is drawn.
      try {
        draw(part, notification, this.actions);
      } catch (error) {
        part.error(`Could not show an update (${String(notification.update?.sessionUpdate ?? "unknown")}): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    part.endStream();
    scheduler.flush();
    scheduler.dispose();
    part.dispose();
    const nodes = Array.from(part.element.childNodes);
    // Laid out at their own size from the start, and for a frame, which the
    // browser remembers them by: drawn at an estimate while off screen
    // (content-visibility), they would grow above the reader once drawn.
    const blocks = nodes.filter((node): node is HTMLElement => node instanceof HTMLElement);
    for (const block of blocks) block.style.contentVisibility = "visible";
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    this.turns.prepend(...nodes);
    this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
    requestAnimationFrame(() => requestAnimationFrame(() => blocks.forEach((block) => block.style.removeProperty("content-visibility"))));
  }
}

/** One update of an earlier turn, as a replay draws it in the transcript. */
function draw(transcript: Transcript, notification: SessionNotification, actions: CardActions): void {
  const u = notification.update;
  const mark = readMark(u);
  if (mark !== undefined) {
    if ("permissionAsked" in mark) return;
    if ("permission" in mark) transcript.permission(PermissionCard.settled(notification.sessionId, mark.permission, actions));
    else if ("stopReason" in mark.turnEnd) {
      transcript.endStream();
      transcript.turnEnded(mark.turnEnd.stopReason);
    } else {
      transcript.endStream();
      transcript.error(mark.turnEnd.error);
    }
    return;
  }
  transcript.draw(u);
}
