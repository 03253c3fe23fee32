// Who answered a permission request, on the phone: two paired devices follow
// one session (the second joined with session/attach); what one answers the
// other shows by the first device's name, live and after a reload, and a turn
// stopped on one shows as stopped there. The real sidecar with the fixture
// agent, the web client built from source, headless chromium.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { send } from "../helpers/phone-steps.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";
import { launch, openPhone, type Phone } from "./browser.ts";
import { buildToTemp, type BuiltClient } from "./build.ts";

const MAIN = "answer-labels-token-0123456789abcdef";

const outcome = (page: Page, n: number) => page.locator(".sv-perm .sv-perm-outcome").nth(n);

describe("answer labels on the phone", () => {
  let dir: string;
  let built: BuiltClient;
  let server: RunningServer;
  let browser: Browser;
  const phones: Phone[] = [];
  let pixel = "";
  let tablet = "";

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-answer-labels-"));
    built = await buildToTemp();
    server = await serveFixtureAgent({ tokens: [MAIN], dataDir: join(dir, "data"), webDir: built.dir });
    pixel = (await server.devices.pair("Pixel 8")).token;
    tablet = (await server.devices.pair("Tablet")).token;
    browser = await launch();
  });

  after(async () => {
    for (const p of phones) await p.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    built?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  async function paired(token: string): Promise<Page> {
    const phone = await openPhone(browser, server.url);
    phones.push(phone);
    await phone.page.goto(`${server.url}/#token=${token}`);
    await phone.page.locator(".wc-list").waitFor();
    return phone.page;
  }

  test("regression: a request another device answered said only 'Answered elsewhere', and one withdrawn by a stopped turn a bare 'Answered'; they say who answered what, live and after a reload", async () => {
    const first = await paired(pixel);
    await first.locator(".wc-new button[type=submit]").click();
    await first.locator('.sv-root[data-connection="connected"]').waitFor();
    await first.waitForURL(/#\/s\/fixture\/[^/]+$/);
    const second = await paired(tablet);
    await second.goto(first.url());
    await second.locator('.sv-root[data-connection="connected"]').waitFor();

    await send(first, "permission Edit README");
    await second.locator(".sv-perm button[data-option-id=allow_once]").waitFor();
    await first.locator(".sv-perm button[data-option-id=allow_once]").click();
    await second.locator('.sv-perm[data-settled="answered elsewhere"]').waitFor();
    assert.equal(await outcome(second, 0).textContent(), "Allowed on Pixel 8 — Allow once");
    assert.equal(await outcome(first, 0).textContent(), "Allowed here — Allow once");
    await second.locator(".sv-agent", { hasText: "outcome: selected allow_once" }).waitFor();

    // A turn stopped on the first page: its request is withdrawn, on both, as stopped.
    await send(first, "permission Deploy");
    await second.locator(".sv-perm:not([data-settled]) button[data-option-id=allow_once]").waitFor();
    await first.locator(".sv-perm:not([data-settled]) button[data-option-id=allow_once]").waitFor();
    await first.locator(".sv-input").press("Escape");
    await second.locator('.sv-perm[data-settled="withdrawn"]').waitFor();
    assert.equal(await outcome(second, 1).textContent(), "Withdrawn: the turn was stopped");
    assert.equal(await outcome(first, 1).textContent(), "Withdrawn: the turn was stopped");

    // A reload draws the replay's marks: the device that answered is named, and the stop.
    await second.reload();
    await second.locator(".sv-perm").nth(1).waitFor();
    assert.deepEqual(await second.locator(".sv-perm .sv-perm-outcome").allTextContents(), ["Allowed on Pixel 8 — Allow once", "Withdrawn: the turn was stopped"]);
  });
});
