// Reconnecting a session screen whose server went out of reach (a restart, a
// network that dropped): while the page is visible the waits between attempts
// stay short, so the page is back within DEFAULT_RECONNECT_VISIBLE_MAX_MS of
// the server; the network coming back (`online`) and the page shown again
// (`pageshow`) make it try at once. A real `acp-remote serve` child with the
// demo agent behind a TCP proxy that refuses connections while the server is
// "down"; chromium at 390×844. Each WebSocket the page opens is one attempt.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { DEFAULT_RECONNECT_VISIBLE_MAX_MS } from "../../web/client/limits.ts";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { openPhone, type Phone } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";

const TOKEN = "web-client-reconnect-token-0123456789";
/** Longest an attempt may take once the server answers: a WebSocket, initialize, session/list and session/load on loopback (milliseconds). */
const ATTEMPT_MS = 1_000;
const WAIT_MS = 60_000;

/** Counts the page's attempts (the WebSockets it opens) and waits for the `n`-th since the count began. */
function attempts(page: Page): { until(n: number): Promise<void> } {
  let seen = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  page.on("websocket", () => {
    seen++;
    for (const w of waiters.filter((x) => x.n <= seen)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return {
    until: (n) =>
      seen >= n
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no attempt #${n} within ${WAIT_MS} ms (${seen} so far)`)), WAIT_MS);
            waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
          }),
  };
}

describe("a session screen reconnects", () => {
  let server: DemoServe;
  let browser: Browser;
  const proxies: TcpProxy[] = [];
  const phones: Phone[] = [];

  /** A page on a session of its own, through a proxy of its own; the proxy then refuses every connection, as a stopped server does. */
  async function cutOff(): Promise<{ page: Page; proxy: TcpProxy; attempt: ReturnType<typeof attempts> }> {
    const proxy = await startTcpProxy(server.port);
    proxies.push(proxy);
    const origin = `http://127.0.0.1:${proxy.port}`;
    const p = await openPhone(browser, origin);
    phones.push(p);
    const { page } = p;
    await page.goto(`${origin}/#token=${TOKEN}`);
    await page.locator(".wc-new button[type=submit]").click();
    await page.locator('.sv-root[data-connection="connected"]').waitFor().catch(async (error: unknown) => {
      // What the page showed instead, so that a failure says where the first connect stood.
      const shown = await page.locator("main").innerText({ timeout: 1_000 }).catch(() => "(no main)");
      throw new Error(`the page did not connect: ${String(error)}\npage: ${shown.slice(0, 2000)}`);
    });
    const attempt = attempts(page);
    proxy.block();
    proxy.cut();
    await page.locator('.sv-root[data-connection="reconnecting"]').waitFor();
    return { page, proxy, attempt };
  }

  before(async () => {
    ({ server, browser } = await demoInBrowser({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "0" } }));
  });
  after(async () => {
    await browser?.close();
    for (const proxy of proxies) await proxy.close();
    await server?.close();
  });

  test("while visible the page is back within a short wait of the server, not after a doubling backoff of many seconds", async () => {
    const { page, proxy, attempt } = await cutOff();
    // Four attempts in: a doubling backoff would wait 8 s for the fifth.
    await attempt.until(4);
    const back = Date.now();
    proxy.unblock();
    await page.locator('.sv-root[data-connection="connected"]').waitFor({ timeout: WAIT_MS });
    const took = Date.now() - back;
    assert.ok(took <= DEFAULT_RECONNECT_VISIBLE_MAX_MS + ATTEMPT_MS, `back ${took} ms after the server`);
  });

  test("a page shown again (pageshow) tries at once", async () => {
    const { page, proxy, attempt } = await cutOff();
    await attempt.until(3);
    // The third attempt has failed once its request over HTTP has (the fallback after the WebSocket).
    await page.waitForEvent("requestfailed", { predicate: (r) => new URL(r.url()).pathname.endsWith("/acp"), timeout: WAIT_MS });
    proxy.unblock();
    const back = Date.now();
    // What the browser fires when it shows the page again from its back-forward cache.
    await page.evaluate(() => dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true })));
    await page.locator('.sv-root[data-connection="connected"]').waitFor({ timeout: WAIT_MS });
    const took = Date.now() - back;
    assert.ok(took < ATTEMPT_MS + 500, `back ${took} ms after pageshow`);
  });

  test("the network coming back (online) makes it try at once", async () => {
    const { page, proxy, attempt } = await cutOff();
    await page.context().setOffline(true);
    await attempt.until(2);
    proxy.unblock();
    const back = Date.now();
    await page.context().setOffline(false);
    await page.locator('.sv-root[data-connection="connected"]').waitFor({ timeout: WAIT_MS });
    const took = Date.now() - back;
    assert.ok(took < ATTEMPT_MS + 500, `back ${took} ms after online`);
  });
});
