// The session view's appearance: at phone size (390×844) in light and dark a
// scripted turn fits the width (no horizontal scroll) with the composer in
// view; inside VS Code its theme variables take over.
// Screenshots go to docs/images only with ACP_REMOTE_UPDATE_SCREENSHOTS=1, so a
// test run leaves the repository as it was.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { call, feed, openViewPage, type ViewPage } from "./page.ts";
import { n, PERMISSION, TURN } from "./fixtures.ts";

const REPO = resolve(import.meta.dirname, "../..");

describe("session view appearance", () => {
  let vp: ViewPage;
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const dir = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-shots-"));
  before(async () => {
    vp = await openViewPage();
  });
  after(async () => {
    await vp?.close();
    if (!update) rmSync(dir, { recursive: true, force: true });
  });

  for (const scheme of ["light", "dark"] as const) {
    test(`${scheme}: a turn fits 390×844 with the composer in view`, async () => {
      const page = await vp.open({ width: 390, height: 844, colorScheme: scheme });
      try {
        await call(page, "setModes", { currentModeId: "code", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] });
        await call(page, "turnStarted");
        await feed(page, [n({ sessionUpdate: "session_info_update", title: "Fix the parser" }), ...TURN]);
        await call(page, "permissionRequested", 1, PERMISSION);
        const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
        assert.ok(widths.scroll <= widths.client, `page scrolls sideways: ${widths.scroll} > ${widths.client}`);
        const composer = await page.locator(".sv-composer").boundingBox();
        assert.ok(composer && composer.y + composer.height <= 844, "the composer is on screen");
        const bg = await page.locator(".sv-root").evaluate((e) => getComputedStyle(e).backgroundColor);
        assert.equal(bg, scheme === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)");
        await page.screenshot({ path: join(dir, `session-view-${scheme}.png`) });
      } finally {
        await page.close();
      }
    });
  }

  test("VS Code's theme variables win over the defaults when present", async () => {
    const page = await vp.open({ colorScheme: "light" });
    try {
      // A VS Code webview sets its theme as custom properties on <html>.
      await page.evaluate(() => {
        document.documentElement.style.setProperty("--vscode-editor-background", "rgb(30, 31, 32)");
        document.documentElement.style.setProperty("--vscode-editor-foreground", "rgb(200, 201, 202)");
      });
      const colors = await page.locator(".sv-root").evaluate((e) => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]);
      assert.deepEqual(colors, ["rgb(30, 31, 32)", "rgb(200, 201, 202)"]);
    } finally {
      await page.close();
    }
  });
});
