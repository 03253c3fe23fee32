// The web client's appearance at phone size (390×844 and 360×740), light and
// dark: a session after a finished demo turn shows its latest message, a
// stopped turn its plan where it stopped, a page that follows another's turn
// from above says what came below, and the session list tells sessions apart
// by title, agent, folder, last activity and state; nothing is off to the side.
// The 390×844 shots go to docs/images only with
// ACP_REMOTE_UPDATE_SCREENSHOTS=1, so a test run leaves the repository as it was.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { DEFAULT_FOLLOW_SLACK_PX } from "../../web/session-view/limits.ts";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { openPhone, PHONE } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";

const REPO = resolve(import.meta.dirname, "../..");
const TOKEN = "web-client-shots-token-0123456789";
const SMALL_PHONE = { width: 360, height: 740 };

async function fitsWidth(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(widths.scroll <= widths.client, `page scrolls sideways: ${widths.scroll} > ${widths.client}`);
}

/** Two frames, so what was drawn is laid out before it is measured or shot. */
const settled = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

/** How far (pixels) the transcript's end is below what the reader sees. */
async function gap(page: Page): Promise<number> {
  await settled(page);
  return page.locator(".sv-scroll").evaluate((s) => s.scrollHeight - s.scrollTop - s.clientHeight);
}

describe("web client appearance", () => {
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const docs = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-shots-"));
  // The smaller phone is shot all the same, to a folder of its own.
  const small = mkdtempSync(join(tmpdir(), "acp-remote-shots-360-"));
  let server: DemoServe;
  let browser: Browser;
  before(async () => {
    ({ server, browser } = await demoInBrowser({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } }));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (!update) rmSync(docs, { recursive: true, force: true });
    rmSync(small, { recursive: true, force: true });
  });

  for (const [size, dir] of [[PHONE, () => docs], [SMALL_PHONE, () => small]] as const) {
    for (const scheme of ["light", "dark"] as const) {
      test(`${size.width}×${size.height}, ${scheme}: a finished turn at its latest message, a stopped one with its plan, a followed one with "Permission request ↓", and the session list, a waiting session first`, async () => {
        const phone = await openPhone(browser, server.url, { colorScheme: scheme });
        const follower = await openPhone(browser, server.url, { colorScheme: scheme });
        const { page } = phone;
        try {
          await page.setViewportSize(size);
          await follower.page.setViewportSize(size);
          await page.goto(`${server.url}/#token=${TOKEN}`);
          await page.locator(".wc-new button[type=submit]").click();
          await page.locator('.sv-root[data-connection="connected"]').waitFor();
          await page.locator(".sv-input").fill("Show me around the project");
          await page.locator(".sv-input").press("Enter");
          await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
          await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
          await fitsWidth(page);
          assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, "the latest message is in view");
          const composer = await page.locator(".sv-composer").boundingBox();
          assert.ok(composer && composer.y + composer.height <= size.height, "the composer is on screen");
          const plan = await page.locator(".sv-plan summary").boundingBox();
          assert.ok(plan && plan.height <= 40, "the plan is one line");
          const bg = await page.locator("body").evaluate((e) => getComputedStyle(e).backgroundColor);
          assert.equal(bg, scheme === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)");
          await page.screenshot({ path: join(dir(), `web-session-${scheme}.png`) });

          // Another page follows the session from above while this one runs a turn.
          await follower.page.goto(`${server.url}/#token=${TOKEN}`);
          await follower.page.locator(".wc-list").waitFor();
          await follower.page.goto(page.url());
          await follower.page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
          await follower.page.locator(".sv-scroll").evaluate((s) => {
            s.dispatchEvent(new WheelEvent("wheel", { deltaY: -420, bubbles: true }));
            s.scrollBy(0, -420);
          });
          await settled(follower.page);
          await page.locator(".sv-input").fill("Once more, and stop at the edit");
          await page.locator(".sv-input").press("Enter");
          await follower.page.locator(".sv-jump", { hasText: "Permission request ↓" }).waitFor();
          await fitsWidth(follower.page);
          await follower.page.screenshot({ path: join(dir(), `web-session-follow-${scheme}.png`) });

          // Stopped at the request: the plan says where, unfolded.
          await page.locator('.sv-perm:not([data-settled]) button[data-option-id="allow_once"]').waitFor();
          await page.locator(".sv-stop").click();
          await page.locator('.sv-turn-end[data-stop-reason="cancelled"]').waitFor();
          await page.locator(".sv-plan summary").click();
          await settled(page);
          assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, "the latest message is in view");
          await fitsWidth(page);
          await page.screenshot({ path: join(dir(), `web-session-stopped-${scheme}.png`) });

          // A second session, left waiting for its answer: listed first, by its own title.
          await page.locator(".wc-back").click();
          await page.locator(".wc-new button[type=submit]").click();
          await page.locator('.sv-root[data-connection="connected"]').waitFor();
          await page.locator(".sv-input").fill("Fix the flaky login test");
          await page.locator(".sv-input").press("Enter");
          await page.locator('.sv-perm button[data-option-id="allow_once"]').waitFor();
          await page.locator(".wc-back").click();
          await page.locator(".wc-item").nth(1).waitFor();
          const first = page.locator(".wc-item").first();
          assert.equal(await first.locator(".wc-badge").textContent(), "waiting for you");
          assert.match((await first.locator(".wc-item-title").textContent()) ?? "", /^Fix the flaky login test/);
          await settled(page);
          await fitsWidth(page);
          await page.screenshot({ path: join(dir(), `web-sessions-${scheme}.png`) });
          assert.deepEqual(await phone.violations(), []);
          assert.deepEqual(await follower.violations(), []);
        } finally {
          await follower.close();
          await phone.close();
        }
      });
    }
  }
});
