// The installable app and its notifications, in Chromium at 390×844 with a
// persistent profile (Chromium refuses install and push in incognito
// contexts) on http://127.0.0.1 (a secure context), against a real `serve`
// (fixture agent) that pushes to a push service stand-in. Headless Chromium
// has no push service of its own, so the test plays it: what the server
// pushed (decrypted by the stand-in) is delivered to the service worker with
// CDP's ServiceWorker.deliverPushMessage, as a push service would deliver it.
// Answers are sent by the worker's own notificationclick handler, reached by
// dispatching the event in the worker.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chromium, type BrowserContext, type CDPSession, type Page, type Worker } from "playwright-core";
import { Acp, AcpExt } from "../../protocol/acp.ts";
import type { NotificationPayload } from "../../protocol/notify.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { AcpPeer } from "../helpers/acp-peer.ts";
import { startPushService, type PushService } from "../helpers/push-service.ts";
import { CHROMIUM } from "../web/page.ts";
import { PHONE } from "./browser.ts";
import { buildToTemp, type BuiltClient } from "./build.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";

const MAIN = "notify-browser-main-token-0123456789";
const TEST_TIMEOUT_MS = 90_000;
/** How long the worker is left to show a notification before the page first asks for them (ms). */
const SHOW_SETTLE_MS = 500;

type Message = Record<string, unknown>;
interface Shown {
  title: string;
  body: string;
  tag: string;
  actions: Array<{ action: string; title: string }>;
}

describe("the installable app and its notifications", () => {
  let dir: string;
  /** The web client built for this file alone: other files rebuild dist/web/client as they run. */
  let built: BuiltClient;
  let push: PushService;
  let server: RunningServer;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let deviceToken: string;
  /** The page's service worker registration, as CDP names it. */
  let registrationId: string | undefined;
  const peers: AcpPeer[] = [];
  let serverClosed = false;

  /** The notifications the worker shows now, read from the page. */
  const shown = (): Promise<Shown[]> =>
    page.evaluate(async () =>
      (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        tag: n.tag,
        actions: ((n as unknown as { actions: Array<{ action: string; title: string }> }).actions ?? []).map((a) => ({ action: a.action, title: a.title })),
      })),
    );

  /**
   * Polls the notifications until `match` holds. Chromium loses a
   * notification the worker is still showing when getNotifications() runs at
   * that moment (it never appears to later calls either), so the first look
   * waits SHOW_SETTLE_MS after whatever made the worker show one.
   */
  async function untilShown(match: (notifications: Shown[]) => boolean, what: string, deadlineMs = 15_000): Promise<Shown[]> {
    await page.waitForTimeout(SHOW_SETTLE_MS);
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const notifications = await shown();
      if (match(notifications)) return notifications;
      if (Date.now() > deadline) throw new Error(`${what}: the worker shows ${JSON.stringify(notifications)}`);
      await page.waitForTimeout(100);
    }
  }

  /** Delivers a payload to the page's service worker, as a push service would. */
  async function deliver(payload: NotificationPayload): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (registrationId === undefined) {
      if (Date.now() > deadline) throw new Error("CDP told of no service worker registration for the page's scope");
      await page.waitForTimeout(50);
    }
    await cdp.send("ServiceWorker.deliverPushMessage", { origin: server.url, registrationId, data: JSON.stringify(payload) });
  }

  /** A click on the notification of `tag` (on `action`, "" for its body), handled by the worker's own listener. */
  async function click(tag: string, action: string): Promise<void> {
    const worker = context.serviceWorkers().find((w) => w.url() === `${server.url}/sw.js`) as Worker;
    await worker.evaluate(
      async ({ tag, action }) => {
        const scope = self as unknown as { registration: ServiceWorkerRegistration; NotificationEvent: new (type: string, init: unknown) => Event };
        const [notification] = await scope.registration.getNotifications({ tag });
        if (notification === undefined) throw new Error(`no notification tagged ${tag}`);
        // A dispatched event is not trusted: its waitUntil throws once the listener has started the work, which goes on.
        self.dispatchEvent(new scope.NotificationEvent("notificationclick", { notification, action }));
      },
      { tag, action },
    );
  }

  const open = async (token: string): Promise<AcpPeer> => {
    const peer = await AcpPeer.open(server.url, token);
    peers.push(peer);
    return peer;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-notify-browser-"));
    built = await buildToTemp();
    push = await startPushService();
    server = await serveFixtureAgent({
      tokens: [MAIN],
      dataDir: join(dir, "data"),
      notify: { pushAgent: new Agent({ ca: push.ca }) },
      webDir: built.dir,
    });
    deviceToken = (await server.devices.pair("Phone")).token;
    context = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: PHONE,
      hasTouch: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    await context.grantPermissions(["notifications"], { origin: server.url });
    page = context.pages()[0] ?? (await context.newPage());
    cdp = await context.newCDPSession(page);
    cdp.on("ServiceWorker.workerRegistrationUpdated", (event: { registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> }) => {
      for (const r of event.registrations) if (r.scopeURL === `${server.url}/` && !r.isDeleted) registrationId = r.registrationId;
    });
    await cdp.send("ServiceWorker.enable");
  });

  after(async () => {
    for (const peer of peers) await peer.close();
    await context?.close();
    if (!serverClosed) await server?.close();
    await push?.close();
    rmSync(dir, { recursive: true, force: true });
    built?.remove();
  });

  test("the service worker is registered and Chromium finds nothing that stops the install", { timeout: TEST_TIMEOUT_MS }, async () => {
    await page.goto(`${server.url}/#token=${deviceToken}`);
    await page.locator(".wc-list").waitFor();
    const scope = await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope));
    assert.equal(scope, `${server.url}/`);
    const { installabilityErrors } = (await cdp.send("Page.getInstallabilityErrors")) as { installabilityErrors: unknown[] };
    assert.deepEqual(installabilityErrors, []);
    const manifest = (await cdp.send("Page.getAppManifest")) as { errors: unknown[] };
    assert.deepEqual(manifest.errors, []);
  });

  test("Notify me on this phone: with no push service in reach the page says so plainly instead of waiting", { timeout: TEST_TIMEOUT_MS }, async () => {
    const control = page.locator(".wc-notify");
    await page.locator('.wc-notify[data-state="off"]').waitFor();
    assert.equal(await control.locator("button").textContent(), "Notify me on this phone");
    await control.locator("button").click();
    await page.locator('.wc-notify[data-state="off"] [role="alert"]').waitFor({ timeout: 30_000 });
    assert.equal(await control.locator(".wc-notify-status").textContent(), "The browser's push service did not answer, so notifications are still off. Try again later.");
    assert.equal(await control.locator("button").isEnabled(), true, "it can be tried again");
  });

  test("a push for a waiting request shows Allow and Reject; Allow from the worker reaches the agent, a second answer is refused, a tap opens the session", { timeout: TEST_TIMEOUT_MS }, async () => {
    // The subscription a push service would have made for this page's device.
    const device = await open(deviceToken);
    const key = ((device.initialized?.["_meta"] as Message)[AcpExt.metaKey] as Message)[AcpExt.webPush] as { applicationServerKey: string };
    const subscription = push.subscribe(key.applicationServerKey);
    await device.request(AcpExt.pushSubscribe, { subscription });

    const laptop = await open(MAIN);
    const { sessionId } = (await laptop.request(Acp.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const turn = laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Edit README.md" }] }, 60_000);
    const [asked] = await push.waitFor(1, subscription.endpoint);
    const payload = asked!.payload as NotificationPayload;
    await deliver(payload);
    const [notification] = await untilShown((n) => n.some((x) => x.tag === payload.tag), "the request's notification");
    assert.equal(notification!.title, "Edit README.md");
    assert.match(notification!.body, /^edit\n/);
    assert.deepEqual(notification!.actions, [
      { action: "allow_once", title: "Allow once" },
      { action: "reject_once", title: "Reject" },
    ]);

    await click(payload.tag, "allow_once");
    await turn;
    assert.match(laptop.agentText(sessionId), /outcome: selected allow_once/);
    await untilShown((n) => n.length === 0, "the answered notification closed");

    // The same notification again (a push delivered twice): its answer is used up.
    await deliver(payload);
    await untilShown((n) => n.some((x) => x.tag === payload.tag), "the notification shown again");
    await click(payload.tag, "allow_once");
    const [refused] = await untilShown((n) => n.some((x) => x.title === "Already answered"), "the refusal");
    assert.match(refused!.body, /^Edit README\.md: this request was answered elsewhere/);
    assert.deepEqual(refused!.actions, [], "no buttons on it");

    // The turn's end: a tap on it opens the session.
    const [, ended] = await push.waitFor(2, subscription.endpoint);
    const end = ended!.payload as NotificationPayload;
    assert.equal(end.kind, "turn_ended");
    await deliver(end);
    await untilShown((n) => n.some((x) => x.tag === end.tag && x.title !== "Already answered"), "the turn's end, in place of the refusal");
    await click(end.tag, "");
    await page.waitForFunction((hash) => location.hash === hash, `#/s/fixture/${encodeURIComponent(sessionId)}`);
    await page.locator('.sv-root[data-connection="connected"]').waitFor();

    // The page shows the session now: a request and the turn's end tell the phone nothing; back on the list, a turn's end does.
    const shownTurn = laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "permission Seen on the page" }] }, 60_000);
    await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
    await shownTurn;
    await page.locator(".wc-back").click();
    await page.locator(".wc-list").waitFor();
    await laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo Back on the list." }] }, 60_000);
    const [, , later] = await push.waitFor(3, subscription.endpoint);
    assert.equal((later!.payload as NotificationPayload).body, "Finished: Back on the list.", "nothing came while the page showed the session");
  });

  test("offline shell: with the network off, and with the server stopped, a reload shows plainly that the server is out of reach", { timeout: TEST_TIMEOUT_MS }, async () => {
    await page.goto(`${server.url}/#/`);
    await page.locator(".wc-list").waitFor();
    await context.setOffline(true);
    await page.reload();
    await page.locator(".wc-message").waitFor();
    assert.match((await page.locator(".wc-message").textContent()) ?? "", /^The server is out of reach: /);
    await context.setOffline(false);

    await server.close();
    serverClosed = true;
    await page.reload();
    await page.locator(".wc-message").waitFor();
    assert.equal(
      await page.locator(".wc-message").textContent(),
      "The server is out of reach: check that it runs and that this device can reach it (the same network, or its public address), then try again.",
    );
    assert.equal(await page.locator(".wc-signin button").textContent(), "Try again");
  });
});
