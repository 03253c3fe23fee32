// An agent that cannot start, seen from the phone: the server answers the
// page (the failure is the agent's, not the network's), so the page names it
// where the person looks instead of "reconnecting" for ever. One working
// agent beside it keeps its sessions listed. Screenshots at phone size and
// desktop size go to test-results/ to be looked at.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { buildToDist } from "./build.ts";
import { launch, openPhone, type Phone } from "./browser.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";

const TOKEN = "web-client-broken-agent-token-0123";
const SHOTS = "test-results/web-client";

describe("an agent that cannot start, on the phone", () => {
  let server: DemoServe;
  let browser: Browser;
  const phones: Phone[] = [];

  before(async () => {
    await buildToDist();
    mkdirSync(SHOTS, { recursive: true });
    server = await spawnDemoServe({
      token: TOKEN,
      args: ["--agent", `demo=${NODE} ${CLI} demo-agent`, "--agent", "broken=/no/such/cmd"],
      env: { ACP_REMOTE_DEMO_DELAY_MS: "1" },
    });
    browser = await launch();
  });
  after(async () => {
    for (const p of phones) await p.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  test("a broken agent shows its failure on the session screen, not 'Connection lost, reconnecting…'", async () => {
    const phone = await openPhone(browser, server.url);
    phones.push(phone);
    const { page } = phone;
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    // The working agent's list still loads; the broken one is named in the status line.
    await page.locator(".wc-status.wc-error", { hasText: "broken" }).waitFor();
    assert.match((await page.locator(".wc-status").textContent()) ?? "", /broken: .*\/no\/such\/cmd/);
    await page.screenshot({ path: `${SHOTS}/broken-agent-list-phone.png` });
    await page.locator("#wc-agent").selectOption("broken");
    await page.locator(".wc-new button[type=submit]").click();
    const error = page.locator(".sv-error", { hasText: "The agent cannot serve this session" });
    await error.waitFor();
    assert.match((await error.textContent()) ?? "", /command not found/);
    assert.equal(await page.locator(".sv-root").getAttribute("data-connection"), "disconnected");
    await page.screenshot({ path: `${SHOTS}/broken-agent-session-phone.png` });
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.screenshot({ path: `${SHOTS}/broken-agent-session-desktop.png` });
  });
});
