// The session view's transcript as markup, to compare two drawings of it
// (live and replayed, before and after a reload).
import type { Page } from "playwright-core";

/** The transcript's markup, without the ids the host gave permission requests. */
export function markup(page: Page): Promise<string> {
  return page.locator(".sv-transcript").evaluate((t) => {
    const copy = t.cloneNode(true) as HTMLElement;
    copy.querySelectorAll("[data-request-id]").forEach((e) => e.removeAttribute("data-request-id"));
    return copy.innerHTML;
  });
}
