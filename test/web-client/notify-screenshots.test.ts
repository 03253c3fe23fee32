// The session list with its "Notify me on this phone" control, at 390×844,
// light and dark, for a paired device: the control sits under the title, on
// screen, and the page fits the width. Screenshots go to docs/images only
// with ACP_REMOTE_UPDATE_SCREENSHOTS=1, so a test run leaves the repository
// as it was.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { Acp } from "../../protocol/acp.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { AcpPeer } from "../helpers/acp-peer.ts";
import { launch, openPhone, PHONE } from "./browser.ts";
import { buildToTemp, type BuiltClient } from "./build.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";

const REPO = resolve(import.meta.dirname, "../..");
const MAIN = "notify-shots-main-token-0123456789";

describe("the notify control's appearance", () => {
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  let shots: string;
  let dir: string;
  /** The web client built for this file alone: other files rebuild dist/web/client as they run. */
  let built: BuiltClient;
  let server: RunningServer;
  let browser: Browser;
  let deviceToken: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-notify-shots-"));
    shots = update ? join(REPO, "docs/images") : join(dir, "shots");
    built = await buildToTemp();
    server = await serveFixtureAgent({
      tokens: [MAIN],
      dataDir: join(dir, "data"),
      webDir: built.dir,
    });
    deviceToken = (await server.devices.pair("Phone")).token;
    // A session with a turn behind it, so the list has something to show.
    const laptop = await AcpPeer.open(server.url, MAIN);
    const { sessionId } = (await laptop.request(Acp.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };
    await laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo The tests pass." }] });
    await laptop.close();
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    built?.remove();
  });

  for (const scheme of ["light", "dark"] as const) {
    test(`${scheme}: the list with "Notify me on this phone" at 390×844`, async () => {
      const phone = await openPhone(browser, server.url, { colorScheme: scheme });
      const { page } = phone;
      try {
        await page.goto(`${server.url}/#token=${deviceToken}`);
        await page.locator(".wc-item").first().waitFor();
        const control = page.locator('.wc-notify[data-state="off"]');
        await control.waitFor();
        assert.equal(await control.locator("button").textContent(), "Notify me on this phone");
        const box = await control.boundingBox();
        assert.ok(box && box.y + box.height <= PHONE.height && box.x >= 0 && box.x + box.width <= PHONE.width, "the control is on screen");
        const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
        assert.ok(widths.scroll <= widths.client, `page scrolls sideways: ${widths.scroll} > ${widths.client}`);
        await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
        await page.screenshot({ path: join(shots, `web-notify-${scheme}.png`) });
        assert.deepEqual(await phone.violations(), []);
        assert.deepEqual(phone.foreign, []);
      } finally {
        await phone.close();
      }
    });
  }
});
