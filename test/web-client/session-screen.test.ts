// The session screen as people use it, on a phone: sessions are told apart
// by their titles (the first prompt's, shortened, until the agent gives
// one), listed newest first with agent, folder, last activity and state; the
// transcript follows the turn (the permission card in view when it comes, the
// answer after Allow, the end after Stop), a session opens at its latest
// message, the plan is one line that says where a cancelled turn stopped, and
// a reload shows what the live page showed. A real `acp-remote serve` child
// with the demo agent streaming at a few milliseconds a word, chromium at
// 390×844 and 360×740, light and dark.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { DEFAULT_FOLLOW_SLACK_PX } from "../../web/session-view/limits.ts";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { send, startSession } from "../helpers/phone-steps.ts";
import { openPhone, type Phone } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";

const TOKEN = "web-client-session-screen-token-0123";
const SMALL_PHONE = { width: 360, height: 740 };

/** Two frames, so what was drawn is laid out before it is measured. */
const settled = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

/** How far (pixels) the transcript's end is below what the reader sees: the log's nearest box that scrolls. */
async function gap(page: Page): Promise<number> {
  await settled(page);
  return page.evaluate(() => {
    let box = document.querySelector("[role=log]");
    while (box && !/auto|scroll/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
    return box ? box.scrollHeight - box.scrollTop - box.clientHeight : Number.NaN;
  });
}

/**
 * The latest turn's blocks as a person reads them, from its prompt on (a
 * server that pages its replays brings that turn first, the earlier ones as
 * the person scrolls up to them).
 */
function latestTurn(page: Page): Promise<string[]> {
  return page.locator(".sv-transcript").evaluate((t) => {
    const all = Array.from(t.children);
    const from = all.findLastIndex((c) => c.classList.contains("sv-user"));
    return all.slice(Math.max(from, 0)).map((c) => `${c.className}: ${(c.textContent ?? "").replace(/\s+/g, " ").trim()}`);
  });
}

/** A box is whole between the session's header and its footer. */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).last().boundingBox();
  const header = await page.locator(".sv-header").boundingBox();
  const footer = await page.locator(".sv-footer").boundingBox();
  return box !== null && header !== null && footer !== null && box.y >= header.y + header.height - 1 && box.y + box.height <= footer.y + 1;
}

describe("the session screen as people use it", () => {
  let server: DemoServe;
  let browser: Browser;
  const phones: Phone[] = [];
  const phone = async (options?: Parameters<typeof openPhone>[2] & { size?: { width: number; height: number } }): Promise<Phone> => {
    const p = await openPhone(browser, server.url, options);
    phones.push(p);
    if (options?.size) await p.page.setViewportSize(options.size);
    return p;
  };

  before(async () => {
    // Words a few milliseconds apart: a turn streams over many frames, as a real one does.
    ({ server, browser } = await demoInBrowser({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "4" } }));
  });
  after(async () => {
    for (const p of phones) assert.deepEqual(await p.violations().catch(() => []), [], "no CSP violation");
    await browser?.close();
    await server?.close();
  });

  test("sessions are named after their first prompt, shortened, and listed newest first with agent, folder, last activity and state", async () => {
    const { page } = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await startSession(page);
    await send(page, "Show me around the project and tell me what each of its folders holds, please");
    const first = "Show me around the project and tell me what each of its…";
    await page.locator("h1.sv-title", { hasText: first }).waitFor();
    await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    assert.equal(await page.title(), `${first} · ACP Remote`);

    await page.locator(".wc-back").click();
    await startSession(page);
    await send(page, "Fix the login test");
    await page.locator("h1.sv-title", { hasText: "Fix the login test" }).waitFor();
    await page.locator('.sv-perm button[data-option-id="reject_once"]').click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();

    await page.locator(".wc-back").click();
    const items = page.locator(".wc-item");
    await items.nth(1).waitFor();
    assert.deepEqual(await page.locator(".wc-item-title").evaluateAll((els) => els.map((e) => e.firstChild?.textContent)), ["Fix the login test", first], "newest first, by title");
    for (const i of [0, 1]) {
      const item = items.nth(i);
      assert.equal(await item.locator(".wc-badge").textContent(), "idle");
      assert.equal(await item.locator(".wc-item-cwd").textContent(), server.cwd);
      assert.equal(await item.locator(".wc-item-meta").last().textContent(), "demo · just now");
    }
  });

  for (const [size, scheme] of [[{ width: 390, height: 844 }, "light"], [SMALL_PHONE, "dark"]] as const) {
    test(`${size.width}×${size.height}, ${scheme}: the turn is followed: the request in view when it comes, the answer after Allow, the end after Stop; a reload and the list open the session at its latest message, as it was`, async () => {
      const { page } = await phone({ colorScheme: scheme, size });
      await page.goto(`${server.url}/#token=${TOKEN}`);
      await startSession(page);
      await send(page, "Show me around");
      const card = '.sv-perm:not([data-settled]) button[data-option-id="allow_once"]';
      await page.locator(card).waitFor();
      assert.ok(await inView(page, ".sv-perm"), "the request is in view when it comes");
      assert.equal(await page.locator(".sv-turn-status").textContent(), "The agent waits for your answer.");
      await page.locator(card).click();
      await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
      assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the answer's end is in view (${await gap(page)} px below)`);
      assert.ok(await inView(page, ".sv-turn-end"), "the turn's end is in view");

      // A second turn, stopped while it waits for its answer.
      await send(page, "Again, please");
      await page.locator(card).waitFor();
      await page.locator(".sv-stop").click();
      await page.locator('.sv-turn-end[data-stop-reason="cancelled"]').waitFor();
      assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `after Stop the end is in view (${await gap(page)} px below)`);
      assert.equal(await page.evaluate(() => document.activeElement?.className), "sv-send", "the focus went from Stop to Send, not to the page");
      const plan = await page.locator(".sv-plan summary").textContent();
      assert.equal(plan, "Plan Cancelled at 2 of 4 Propose an edit and ask for permission");
      const live = await latestTurn(page);

      await page.reload();
      await page.locator('.sv-root[data-connection="connected"]').waitFor();
      await page.locator('.sv-turn-end[data-stop-reason="cancelled"]').waitFor();
      assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `a reload opens at the latest message (${await gap(page)} px below)`);
      assert.deepEqual(await latestTurn(page), live, "a reload shows what the live page showed");
      assert.equal(await page.locator(".sv-plan summary").textContent(), plan, "the plan after a reload is where the turn left it");

      await page.locator(".wc-back").click();
      await page.locator(".wc-item").first().click();
      await page.locator('.sv-turn-end[data-stop-reason="cancelled"]').waitFor();
      assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `opened from the list, at the latest message (${await gap(page)} px below)`);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(widths.scroll <= widths.client, `the page scrolls sideways: ${widths.scroll} > ${widths.client}`);
    });
  }
});
