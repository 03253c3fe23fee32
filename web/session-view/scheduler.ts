// Coalesces re-renders of growing messages: many chunks in one frame cost one
// render of the message they touched, and a message whose render is slow is
// re-rendered less often (backoff proportional to its last render time), so a
// long turn never re-renders the transcript, nor one message, per chunk.
import { DEFAULT_RENDER_BACKOFF_FACTOR } from "./limits.ts";

export interface Renderable {
  render(): void;
}

export class FrameScheduler {
  private readonly dirty = new Set<Renderable>();
  private readonly notBefore = new WeakMap<Renderable, number>();
  private frame: number | undefined;

  /** Called after each frame that rendered (the view keeps the reader at the bottom here). */
  private readonly afterRender: () => void;

  constructor(afterRender: () => void = () => {}) {
    this.afterRender = afterRender;
  }

  mark(item: Renderable): void {
    this.dirty.add(item);
    this.request();
  }

  /** Asks for a frame without a render: something else changed the transcript's height. */
  touch(): void {
    this.request();
  }

  /** Renders every pending item now (end of turn, replay done, tests). */
  flush(): void {
    for (const item of this.dirty) this.renderOne(item);
    this.dirty.clear();
    this.afterRender();
  }

  dispose(): void {
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
    this.dirty.clear();
  }

  private request(): void {
    if (this.frame === undefined) this.frame = requestAnimationFrame(() => this.onFrame());
  }

  private onFrame(): void {
    this.frame = undefined;
    const now = performance.now();
    for (const item of this.dirty) {
      if ((this.notBefore.get(item) ?? 0) > now) continue;
      this.dirty.delete(item);
      this.renderOne(item);
    }
    this.afterRender();
    if (this.dirty.size > 0) this.request();
  }

  private renderOne(item: Renderable): void {
    const start = performance.now();
    item.render();
    const end = performance.now();
    this.notBefore.set(item, end + (end - start) * DEFAULT_RENDER_BACKOFF_FACTOR);
  }
}
