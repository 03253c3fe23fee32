// What a person needs at a glance, in a browser: a session waiting for an
// answer to a permission request is listed first with a "waiting for you"
// badge, the tab's title counts it, opening it brings the request into view
// (focused), and a page following a turn another page runs sees it end from
// the server's state updates, without asking session/list again. A real
// `acp-remote serve` child with the demo agent (each turn asks a permission),
// chromium at 390×844 and 1400×900, light and dark. The phone's list is saved
// to docs/images only with ACP_REMOTE_UPDATE_SCREENSHOTS=1.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { send, startSession } from "../helpers/phone-steps.ts";
import { buildToDist } from "./build.ts";
import { launch, PHONE } from "./browser.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";

const REPO = resolve(import.meta.dirname, "../..");
const TOKEN = "web-client-waiting-token-0123456789";
const DESKTOP = { width: 1400, height: 900 };

/** Records what the page asks of session/list over its WebSockets, and its app-badge calls. */
interface Watched {
  page: Page;
  listRequests(): number;
  badges(): Promise<number[]>;
}

async function openPage(browser: Browser, viewport: { width: number; height: number }, colorScheme: "light" | "dark"): Promise<Watched> {
  const mobile = viewport.width === PHONE.width;
  const context = await browser.newContext({ viewport, colorScheme, isMobile: mobile, hasTouch: mobile });
  // The badge calls reach the browser's own setAppBadge (where it has one) after they are counted.
  await context.addInitScript(() => {
    const calls: number[] = [];
    (window as unknown as { badgeCalls: number[] }).badgeCalls = calls;
    const nav = navigator as Navigator & { setAppBadge?(n?: number): Promise<void>; clearAppBadge?(): Promise<void> };
    const set = nav.setAppBadge?.bind(nav);
    const clear = nav.clearAppBadge?.bind(nav);
    nav.setAppBadge = (n?: number) => (calls.push(n ?? 0), set ? set(n).catch(() => undefined) : Promise.resolve());
    nav.clearAppBadge = () => (calls.push(0), clear ? clear().catch(() => undefined) : Promise.resolve());
  });
  const page = await context.newPage();
  let lists = 0;
  page.on("websocket", (ws) => {
    ws.on("framesent", (frame) => {
      if (typeof frame.payload === "string" && frame.payload.includes('"method":"session/list"')) lists++;
    });
  });
  contexts.push(() => context.close());
  return { page, listRequests: () => lists, badges: () => page.evaluate(() => (window as unknown as { badgeCalls: number[] }).badgeCalls) };
}

const contexts: Array<() => Promise<void>> = [];

/** Two frames, so what was drawn is laid out before it is measured or shot. */
const settled = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

describe("a session waiting for the person, at a glance", () => {
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const dir = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-waiting-"));
  // Only the phone's list goes in the docs; the wide one is shot all the same, to a folder of its own.
  const wideDir = mkdtempSync(join(tmpdir(), "acp-remote-waiting-wide-"));
  const servers: DemoServe[] = [];
  let browser: Browser | undefined;
  let built: Promise<void> | undefined;

  after(async () => {
    for (const close of contexts) await close().catch(() => undefined);
    await browser?.close();
    for (const server of servers) await server.close();
    if (!update) rmSync(dir, { recursive: true, force: true });
    rmSync(wideDir, { recursive: true, force: true });
  });

  for (const [size, viewport] of [["390×844", PHONE], ["1400×900", DESKTOP]] as const) {
    for (const scheme of ["light", "dark"] as const) {
      test(`${size}, ${scheme}: a session waiting for a permission is listed first with its badge and counted in the title; opened, its request is in view and focused; a follower sees the turn end without asking session/list`, async () => {
        built ??= buildToDist();
        await built;
        browser ??= await launch();
        // A server of its own: the list holds this test's sessions only.
        const server = await spawnDemoServe({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } });
        servers.push(server);

        // The first page starts a turn that waits for its permission request.
        const prompter = await openPage(browser, viewport, scheme);
        await prompter.page.goto(`${server.url}/#token=${TOKEN}`);
        const waitingId = await startSession(prompter.page);
        await send(prompter.page, "Show me around");
        await prompter.page.locator(".sv-perm button[data-option-id=allow_once]").waitFor();

        // A newer session that waits for nothing, from another page.
        const other = await openPage(browser, viewport, scheme);
        await other.page.goto(`${server.url}/#token=${TOKEN}`);
        const idleId = await startSession(other.page);

        // The person's phone: the waiting session first, though older, with its badge.
        const follower = await openPage(browser, viewport, scheme);
        const { page } = follower;
        await page.goto(`${server.url}/#token=${TOKEN}`);
        await page.locator(".wc-item").nth(1).waitFor();
        assert.deepEqual(await page.locator(".wc-item").evaluateAll((items) => items.map((i) => (i as HTMLElement).dataset["sessionId"])), [waitingId, idleId]);
        const first = page.locator(".wc-item").first();
        assert.equal(await first.getAttribute("data-state"), "requires_action");
        assert.equal(await first.locator(".wc-badge.wc-waiting").textContent(), "waiting for you");
        assert.equal(await page.locator(".wc-item").nth(1).locator(".wc-badge").textContent(), "idle", "the idle session is marked idle, quietly");
        await page.locator(".wc-status", { hasText: "1 session is waiting for you." }).waitFor();
        assert.equal(await page.title(), "(1) ACP Remote");
        assert.equal((await follower.badges()).at(-1), 1, "the app badge counts it");
        await settled(page);
        const badge = await first.locator(".wc-waiting").evaluate((e) => {
          const style = getComputedStyle(e);
          return { color: style.color, background: style.backgroundColor };
        });
        assert.deepEqual(badge, scheme === "dark" ? { color: "rgb(13, 17, 23)", background: "rgb(210, 153, 34)" } : { color: "rgb(255, 255, 255)", background: "rgb(154, 103, 0)" });
        const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
        assert.ok(widths.scroll <= widths.client, `the list scrolls sideways: ${widths.scroll} > ${widths.client}`);
        await page.screenshot({ path: size === "390×844" ? join(dir, `web-sessions-waiting-${scheme}.png`) : join(wideDir, `web-sessions-waiting-${scheme}.png`) });

        // Opened: the request is in view and focused, the title says the session waits.
        await first.click();
        await page.locator('.sv-root[data-connection="connected"]').waitFor();
        const card = page.locator(".sv-perm").first();
        await card.locator("button[data-option-id=allow_once]").waitFor();
        await page.waitForFunction(() => document.activeElement?.classList.contains("sv-perm") === true);
        await settled(page);
        const box = await card.boundingBox();
        assert.ok(box, "the card is drawn");
        const viewHeight = await page.evaluate(() => window.innerHeight);
        assert.ok(box.y >= 0 && box.y + box.height <= viewHeight && box.x >= 0 && box.x + box.width <= viewport.width, `the card is in view: ${JSON.stringify(box)}`);
        assert.equal(await page.title(), "Waiting: Show me around");
        await page.locator(".sv-stop").waitFor();

        // The first page answers; this page sees the turn end from the server's notice alone.
        const listsBefore = follower.listRequests();
        await prompter.page.locator(".sv-perm button[data-option-id=allow_once]").click();
        await page.locator('.sv-perm[data-settled="answered elsewhere"]').waitFor();
        await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
        await page.locator(".sv-stop").waitFor({ state: "hidden" });
        assert.equal(await page.title(), "Show me around · ACP Remote");
        assert.equal((await follower.badges()).at(-1), 0, "the badge is cleared");
        assert.equal(follower.listRequests(), listsBefore, "no session/list after the session opened");
        assert.equal(await page.locator(".sv-turn-end").count(), 1, "the turn's end shows once");
      });
    }
  }
});
