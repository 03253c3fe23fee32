// Follows the turn: the transcript's scroller stays at the latest message
// while the person has not scrolled up, whatever changes its height (a
// streamed chunk, a new card, a block drawn at its real size once it comes on
// screen, a card that loses its buttons), and once they have, a button says
// that something new came below ("New messages ↓", or the permission request
// that waits for them) and takes them there.
//
// Only the person moves the view up: the scroller's position going down
// (scrollTop smaller than where it was last left) while it is not at the
// bottom, right after their own gesture or while nothing changes size. Growth
// never does, so a block added between two frames, before the scroll event of
// the last move to the bottom, does not read as the person leaving it; nor
// does a block drawn smaller than its estimate, which makes the browser pull
// the position up just before the next block grows the end. While following,
// the browser's scroll anchoring is off (it would hold the view on a block
// above while the end grows); once the person reads above, it is on, and
// keeps their place steady.
import { el } from "./dom.ts";
import { DEFAULT_FOLLOW_GESTURE_MS, DEFAULT_FOLLOW_RESIZE_QUIET_MS, DEFAULT_FOLLOW_SLACK_PX } from "./limits.ts";

/** The events of a person moving the view themselves. */
const GESTURES = ["wheel", "touchmove", "keydown", "pointerdown"] as const;

/** What waits below the view for a person who scrolled up. */
export type Unseen = "messages" | "permission";

const JUMP_LABELS: Record<Unseen, string> = {
  messages: "New messages ↓",
  permission: "Permission request ↓",
};

export class Follower {
  /** The scroller, holding `content`. */
  readonly element: HTMLElement;
  /** The button that takes the person to the latest message. */
  readonly jump: HTMLButtonElement;
  private following = true;
  /** scrollTop where the view was last left (by this class or by the person). */
  private lastTop = 0;
  private unseen: Unseen | undefined;
  /** When the person last touched the scroller (wheel, touch, key, pointer), and when its content last changed size (performance.now()). */
  private gestureAt = Number.NEGATIVE_INFINITY;
  private resizedAt = Number.NEGATIVE_INFINITY;
  private readonly resize: ResizeObserver;
  /** Adds each box put in the scroller to what `resize` watches. */
  private readonly children: MutationObserver;
  private readonly onJump: () => void;

  /** `onJump` runs after the view went to the latest message from the button (to move the focus there). */
  constructor(content: HTMLElement, onJump: () => void) {
    this.onJump = onJump;
    // Focusable, so that the keyboard scrolls it; the log inside is what a screen reader reads.
    this.element = el("div", { class: "sv-scroll sv-following", role: "region", "aria-label": "Transcript", tabindex: 0 }, content);
    this.jump = el("button", { type: "button", class: "sv-jump", hidden: true });
    this.jump.addEventListener("click", () => {
      this.toBottom();
      this.onJump();
    });
    this.element.addEventListener("scroll", this.onScroll, { passive: true });
    for (const type of GESTURES) this.element.addEventListener(type, this.onGesture, { passive: true });
    // What the scroller holds grows or shrinks (the transcript, and whatever a view puts beside it), or the
    // scroller does (the keyboard opens, the plan unfolds).
    this.resize = new ResizeObserver(() => {
      this.resizedAt = performance.now();
      this.stick();
    });
    this.resize.observe(this.element);
    this.resize.observe(content);
    this.children = new MutationObserver((records) => {
      for (const record of records) {
        for (const node of Array.from(record.addedNodes)) if (node instanceof Element) this.resize.observe(node);
        for (const node of Array.from(record.removedNodes)) if (node instanceof Element) this.resize.unobserve(node);
      }
    });
    this.children.observe(this.element, { childList: true });
  }

  /** Something new was drawn at the end: the view goes there, or the person is told it is there. */
  added(what: Unseen = "messages"): void {
    this.stick();
    if (this.following) return;
    // A request that waits for the person outranks text.
    if (this.unseen !== "permission") this.unseen = what;
    this.jump.textContent = JUMP_LABELS[this.unseen];
    this.jump.hidden = false;
  }

  /** Keeps the view at the bottom while following; notices a move up the person made since. */
  stick(): void {
    const s = this.element;
    if (!this.following) return;
    if (this.movedUpByPerson(s.scrollTop) && this.gap() > DEFAULT_FOLLOW_SLACK_PX) {
      this.setFollowing(false);
      return;
    }
    s.scrollTop = s.scrollHeight;
    this.lastTop = s.scrollTop;
  }

  /** Goes to the latest message and follows the turn again. */
  toBottom(): void {
    this.setFollowing(true);
    this.stick();
  }

  /** The view was moved on purpose (a request brought into view): it follows only if that left it at the bottom. */
  moved(): void {
    this.lastTop = this.element.scrollTop;
    this.setFollowing(this.gap() <= DEFAULT_FOLLOW_SLACK_PX);
  }

  dispose(): void {
    this.resize.disconnect();
    this.children.disconnect();
    this.element.removeEventListener("scroll", this.onScroll);
    for (const type of GESTURES) this.element.removeEventListener(type, this.onGesture);
  }

  private readonly onGesture = (): void => {
    this.gestureAt = performance.now();
  };

  /** The position went up since it was last left, and the person did it (see the top of this file). */
  private movedUpByPerson(top: number): boolean {
    if (top >= this.lastTop - 1) return false;
    const now = performance.now();
    return now - this.gestureAt < DEFAULT_FOLLOW_GESTURE_MS || now - this.resizedAt > DEFAULT_FOLLOW_RESIZE_QUIET_MS;
  }

  private readonly onScroll = (): void => {
    const top = this.element.scrollTop;
    if (this.gap() <= DEFAULT_FOLLOW_SLACK_PX) this.setFollowing(true);
    else if (this.movedUpByPerson(top)) this.setFollowing(false);
    this.lastTop = top;
  };

  private gap(): number {
    const s = this.element;
    return s.scrollHeight - s.scrollTop - s.clientHeight;
  }

  private setFollowing(following: boolean): void {
    this.following = following;
    this.element.classList.toggle("sv-following", following);
    if (following) {
      this.unseen = undefined;
      this.jump.hidden = true;
    }
  }
}
