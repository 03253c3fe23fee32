// A long session on the phone: the web client asks for the latest turns of
// its history first, and the earlier ones when the person scrolls up to them.
// A real `acp-remote serve` child with the fixture agent (its `work` command
// streams a coding agent's turns), chromium at phone size.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { client, methods, PROTOCOL_VERSION, type ClientConnection, type SessionNotification, type SessionUpdate } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { Browser } from "playwright-core";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { NODE } from "../helpers/connect-child.ts";
import { FIXTURE_AGENT } from "../helpers/sidecar-server.ts";
import { drawHistory } from "../helpers/view-model.ts";
import { DEFAULT_HISTORY_PAGE_TURNS } from "../../web/client/limits.ts";
import { openPhone, type Phone } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";

const TOKEN = "web-history-pages-token-0123456789";
const TURNS = 5;
/** Turns the page shows at first, and adds with each scroll up. */
const PAGE = DEFAULT_HISTORY_PAGE_TURNS;

describe("a long session on the phone: the latest turns first, the earlier ones on scrolling up", () => {
  let server: DemoServe;
  let browser: Browser;
  let sdk: ClientConnection | undefined;
  const phones: Phone[] = [];

  before(async () => {
    ({ server, browser } = await demoInBrowser({ token: TOKEN, args: ["--agent", `fixture=${NODE} ${FIXTURE_AGENT}`] }));
  });
  after(async () => {
    sdk?.close();
    await sdk?.closed.catch(() => undefined);
    for (const p of phones) await p.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  /** An SDK client of the server, which allows every permission request. */
  function connect(updates: SessionNotification[]): ClientConnection {
    return client({ name: "history-pages" })
      .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
        updates.push(params);
      })
      .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }))
      .connect(createWebSocketStream(`${server.url.replace(/^http/, "ws")}/acp`, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } }) as never);
  }

  /** A phone paired with the server, on the session's screen. */
  async function onSession(sessionId: string): Promise<Phone> {
    const phone = await openPhone(browser, server.url);
    phones.push(phone);
    const { page } = phone;
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await page.goto(`${server.url}/#/s/fixture/${encodeURIComponent(sessionId)}`);
    return phone;
  }

  test("a session of five turns opens with its latest turn; scrolling up brings the others above, the reader's place kept, until all show once", async () => {
    const updates: SessionNotification[] = [];
    sdk = connect(updates);
    await sdk.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await sdk.agent.request(methods.agent.session.new, { cwd: server.cwd, mcpServers: [] });
    for (let turn = 1; turn <= TURNS; turn++) {
      await sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `work 200 ${turn}` }] });
    }
    // What the whole history shows, from a session/load that asks for no pages.
    const replay: SessionNotification[] = [];
    const whole = connect(replay);
    await whole.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await whole.agent.request(methods.agent.session.load, { sessionId, cwd: server.cwd, mcpServers: [] });
    whole.close();
    const shown = drawHistory(replay.map((n): SessionUpdate => n.update));
    const messages = shown.blocks.filter((b) => b.block === "message").length;
    const tools = shown.blocks.filter((b) => b.block === "tool").length;

    const phone = await onSession(sessionId);
    const { page } = phone;
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    await page.locator(".sv-agent", { hasText: `Done: ${TURNS}.` }).waitFor();
    // The latest turn (one prompt each), after the end of the turn before it.
    const prompts = (): Promise<number> => page.locator(".sv-msg.sv-user").count();
    assert.equal(await prompts(), PAGE, "the latest turn");
    assert.equal(await page.locator(".sv-turn-end").count(), PAGE + 1, "its end, and the end of the turn before");
    const more = page.locator(".sv-earlier-more");
    assert.equal(await more.isVisible(), true, "the page says earlier messages are there");

    // Scrolled up to the top: the turn before comes above.
    const scroller = page.locator(".sv-scroll");
    // To the top with a wheel event first, as a person scrolls.
    const toTop = (): Promise<void> =>
      scroller.evaluate((s) => {
        s.dispatchEvent(new WheelEvent("wheel", { deltaY: -s.scrollTop, bubbles: true }));
        s.scrollTop = 0;
      });
    const firstShown = page.locator(".sv-transcript > *").first();
    await toTop();
    await page.waitForFunction((n) => document.querySelectorAll(".sv-msg.sv-user").length === n, 2 * PAGE);
    const box = await firstShown.boundingBox();
    const view = await scroller.boundingBox();
    assert.ok(box && view && box.y >= view.y - 1 && box.y < view.y + view.height, "what was at the top stays in view");
    assert.ok((await scroller.evaluate((s) => s.scrollTop)) > 0, "the earlier turns are above, not jumped to");

    // Up again until the first turn, and nothing before it.
    for (let shown = 2 * PAGE; shown < TURNS; shown = Math.min(TURNS, shown + PAGE)) {
      await toTop();
      await page.waitForFunction((n) => document.querySelectorAll(".sv-msg.sv-user").length === n, Math.min(TURNS, shown + PAGE));
    }
    await more.waitFor({ state: "hidden" });
    assert.equal(await page.locator(".sv-turn-end").count(), TURNS, "each turn's end once");
    assert.equal(await page.locator(".sv-msg").count(), messages, "every message once");
    assert.equal(await page.locator(".sv-tool").count(), tools, "every tool call once");
    assert.deepEqual(await phone.violations(), [], "no CSP violation");
  });

  test("a session whose latest turn does not fill the screen shows the turns before it at once, as far as the screen goes", async () => {
    const updates: SessionNotification[] = [];
    const c = connect(updates);
    await c.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await c.agent.request(methods.agent.session.new, { cwd: server.cwd, mcpServers: [] });
    for (let turn = 1; turn <= 3; turn++) await c.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `echo short ${turn}` }] });
    c.close();
    const { page } = await onSession(sessionId);
    await page.locator(".sv-agent", { hasText: "short 1" }).waitFor();
    await page.locator(".sv-earlier-more").waitFor({ state: "hidden" });
    const answers = (await page.locator(".sv-msg.sv-agent .sv-body").allTextContents()).map((t) => t.trim());
    assert.deepEqual(answers, ["short 1", "short 2", "short 3"], "every turn, once, in order");
  });
});
