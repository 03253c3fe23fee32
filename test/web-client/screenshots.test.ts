// The web client's appearance at phone size (390×844), light and dark: the
// session list and a session after a finished demo turn fit the width with
// nothing off to the side. Screenshots go to docs/images only with
// ACP_REMOTE_UPDATE_SCREENSHOTS=1, so a test run leaves the repository as it was.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { buildToDist } from "./build.ts";
import { launch, openPhone, PHONE } from "./browser.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";

const REPO = resolve(import.meta.dirname, "../..");
const TOKEN = "web-client-shots-token-0123456789";

async function fitsWidth(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(widths.scroll <= widths.client, `page scrolls sideways: ${widths.scroll} > ${widths.client}`);
}

describe("web client appearance", () => {
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const dir = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-shots-"));
  let server: DemoServe;
  let browser: Browser;
  before(async () => {
    await buildToDist();
    server = await spawnDemoServe({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (!update) rmSync(dir, { recursive: true, force: true });
  });

  for (const scheme of ["light", "dark"] as const) {
    test(`${scheme}: a finished demo turn and the session list at 390×844`, async () => {
      const phone = await openPhone(browser, server.url, { colorScheme: scheme });
      const { page } = phone;
      try {
        await page.goto(`${server.url}/#token=${TOKEN}`);
        await page.locator(".wc-new button[type=submit]").click();
        await page.locator('.sv-root[data-connection="connected"]').waitFor();
        await page.locator(".sv-input").fill("Show me around");
        await page.locator(".sv-input").press("Enter");
        await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
        await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
        await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
        await fitsWidth(page);
        const composer = await page.locator(".sv-composer").boundingBox();
        assert.ok(composer && composer.y + composer.height <= PHONE.height, "the composer is on screen");
        const bg = await page.locator("body").evaluate((e) => getComputedStyle(e).backgroundColor);
        assert.equal(bg, scheme === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)");
        await page.screenshot({ path: join(dir, `web-session-${scheme}.png`) });

        await page.locator(".wc-back").click();
        await page.locator(".wc-item").first().waitFor();
        await fitsWidth(page);
        await page.screenshot({ path: join(dir, `web-sessions-${scheme}.png`) });
        assert.deepEqual(await phone.violations(), []);
      } finally {
        await phone.close();
      }
    });
  }
});
