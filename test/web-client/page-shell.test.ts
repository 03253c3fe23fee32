// The page's shell, as a screen reader and a tab bar meet it: each screen is
// one <main> with one <h1>; going from one screen to another moves the focus
// to the new screen's heading and the tab's title to its name; the way back
// from a session is a link named "Back to sessions"; the message of a device
// no longer paired is read politely, not as an alert on every load. A real
// `acp-remote serve` child with the demo agent, chromium at 360×740, dark.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { openPhone, type Phone } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";

const TOKEN = "web-client-page-shell-token-0123456789";
const SIZE = { width: 360, height: 740 };

/** The landmarks and headings of the screen, and where the focus is. */
function shell(page: Page): Promise<{ mains: number; h1s: string[]; focused: string }> {
  return page.evaluate(() => ({
    mains: document.querySelectorAll("main").length,
    h1s: Array.from(document.querySelectorAll("h1")).map((h) => h.textContent ?? ""),
    focused: document.activeElement === null ? "" : `${document.activeElement.tagName.toLowerCase()}:${document.activeElement.textContent ?? ""}`,
  }));
}

describe("the page's shell", () => {
  let server: DemoServe;
  let browser: Browser;
  const phones: Phone[] = [];
  const phone = async (): Promise<Page> => {
    const p = await openPhone(browser, server.url, { colorScheme: "dark" });
    phones.push(p);
    await p.page.setViewportSize(SIZE);
    return p.page;
  };

  before(async () => {
    ({ server, browser } = await demoInBrowser({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } }));
  });
  after(async () => {
    for (const p of phones) assert.deepEqual(await p.violations().catch(() => []), [], "no CSP violation");
    await browser?.close();
    await server?.close();
  });

  test("focus and the tab's title move with the screen; each screen is one <main> with one <h1>; the way back is a link named 'Back to sessions'", async () => {
    const page = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    assert.equal(await page.title(), "ACP Remote");
    assert.deepEqual((await shell(page)).mains, 1);
    assert.deepEqual((await shell(page)).h1s, ["ACP Remote"]);

    await page.locator(".wc-new button[type=submit]").click();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    // Untitled yet: named as every view names it, its agent and the end of its id.
    assert.match(await page.title(), /^demo · [\w-]{6} · ACP Remote$/);
    assert.match((await page.locator("h1.sv-title").textContent()) ?? "", /^demo · [\w-]{6}$/);
    await page.locator(".sv-input").fill("Plan my week");
    await page.locator(".sv-input").press("Enter");
    await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    assert.equal(await page.title(), "Plan my week · ACP Remote");

    const back = page.getByRole("link", { name: "Back to sessions" });
    assert.equal(await back.count(), 1, "the way back is a link a screen reader names 'Back to sessions'");
    await back.click();
    await page.locator(".wc-item").first().waitFor();
    assert.equal(await page.title(), "ACP Remote");
    assert.deepEqual(await shell(page), { mains: 1, h1s: ["ACP Remote"], focused: "h1:ACP Remote" });

    await page.locator(".wc-item").first().click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    assert.equal(await page.title(), "Plan my week · ACP Remote");
    assert.deepEqual(await shell(page), { mains: 1, h1s: ["Plan my week"], focused: "h1:Plan my week" });
    // The bar's links and the session's heading are outside and inside the one <main>.
    assert.equal(await page.locator("main h1.sv-title").count(), 1);
    assert.equal(await page.locator("nav .wc-back").count(), 1);
  });

  test("a device no longer paired is told so politely on every load (role=status), a link just refused at once (role=alert); the tab's title names the screen", async () => {
    const page = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await page.evaluate(() => localStorage.setItem("acp-remote.token", "a-token-since-revoked"));
    for (const load of [1, 2]) {
      await page.reload();
      const message = page.locator(".wc-message");
      await message.waitFor();
      assert.equal(await message.getAttribute("data-reason"), "unpaired", `load ${load}`);
      assert.equal(await message.getAttribute("role"), "status", `load ${load}: not an assertive alert`);
      assert.equal(await page.title(), "Pair this browser · ACP Remote");
      assert.deepEqual((await shell(page)).h1s, ["ACP Remote"]);
    }
    await page.locator("#wc-link-input").fill(`${server.url}/#token=not-the-token`);
    await page.locator(".wc-signin-form button").click();
    const refused = page.locator('.wc-message[data-reason="not-accepted"]');
    await refused.waitFor();
    assert.equal(await refused.getAttribute("role"), "alert", "the answer to what the person just did is announced at once");
  });
});
