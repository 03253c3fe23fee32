// A cut Streamable HTTP stream on the phone: the server offers resumable
// streams (`_meta.acpRemote.resumableStreams`), so the page asks for the
// session's GET stream again with Last-Event-ID and goes on from the last
// event it read, instead of dropping the link and loading the whole session
// again. A real `acp-remote serve` child with the demo agent, behind a TCP
// proxy that resets the session stream's connection mid-turn; chromium at
// 390×844 without WebSocket, so the page speaks Streamable HTTP (HTTP/1.1:
// each GET stream is a TCP connection of its own).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { buildToDist } from "./build.ts";
import { launch, openPhone, type Phone } from "./browser.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";

const TOKEN = "web-client-stream-resume-token-0123456789";
/** The demo's pause between streamed words (milliseconds): long enough that a cut lands inside a sentence. */
const WORD_DELAY_MS = "10";
const HELLO = "Hello! I am the demo agent of acp-remote: I run without an API key or network, and every turn shows the kinds of messages a real agent sends through acp-remote.";
const REJECTED = "You rejected the edit, so I leave your files alone.";
const TOUR = "That is the whole tour: thoughts, a plan, streamed text, a tool call with a permission request, and a file read through the client.";

/** The request head of a session's GET stream, as the proxy saw the browser send it. */
const sessionStream = (head: string): boolean => /^GET /.test(head) && /^acp-session-id:/im.test(head);

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Everything the agent said, as the page shows it. */
async function agentText(page: Page): Promise<string> {
  return (await page.locator(".sv-agent .sv-body").allTextContents()).join("\n");
}

describe("the web client over Streamable HTTP", () => {
  let server: DemoServe;
  let browser: Browser;
  let proxy: TcpProxy;
  let phone: Phone | undefined;

  before(async () => {
    await buildToDist();
    server = await spawnDemoServe({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: WORD_DELAY_MS } });
    proxy = await startTcpProxy(server.port);
    browser = await launch();
  });
  after(async () => {
    await phone?.close();
    await browser?.close();
    await proxy?.close();
    await server?.close();
  });

  test("the web client resumes a cut HTTP stream with Last-Event-ID instead of reloading the session", async () => {
    const origin = `http://127.0.0.1:${proxy.port}`;
    phone = await openPhone(browser, origin, {
      init: () => {
        delete (window as { WebSocket?: unknown }).WebSocket;
      },
    });
    const { page } = phone;
    let loads = 0;
    const resumedFrom: string[] = [];
    page.on("request", (request) => {
      if (!new URL(request.url()).pathname.endsWith("/acp")) return;
      if (request.method() === "POST" && (request.postData() ?? "").includes('"session/load"')) loads++;
      const lastEventId = request.headers()["last-event-id"];
      if (request.method() === "GET" && lastEventId !== undefined) resumedFrom.push(lastEventId);
    });

    await page.goto(`${origin}/#token=${TOKEN}`);
    await page.locator(".wc-new button[type=submit]").click();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    assert.equal(await page.locator(".wc-link").getAttribute("data-profile"), "http");

    await page.locator(".sv-input").fill("Resume me");
    await page.locator(".sv-input").press("Enter");
    // Mid-sentence: the words still to come are written while the stream is cut.
    await page.locator(".sv-agent", { hasText: "Hello!" }).waitFor();
    assert.equal(proxy.cutWhere(sessionStream), 1, "the session's stream was cut");

    // The turn goes on to its permission request on the resumed stream; cut
    // again while it waits, with nothing in flight.
    await page.locator(".sv-perm button[data-option-id=reject_once]").waitFor();
    assert.equal(proxy.cutWhere(sessionStream), 1, "the resumed stream was cut");
    await page.locator(".sv-perm button[data-option-id=reject_once]").click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    await page.locator(".sv-agent", { hasText: "That is the whole tour" }).waitFor();

    assert.equal(loads, 0, "no session/load: the session was not loaded again");
    assert.ok(resumedFrom.length >= 2, `each cut stream was asked for again with Last-Event-ID (${JSON.stringify(resumedFrom)})`);
    const said = await agentText(page);
    for (const sentence of [HELLO, REJECTED, TOUR]) {
      assert.equal(occurrences(said, sentence), 1, `shown once, whole: ${sentence}\n--- the page shows:\n${said}`);
    }
    assert.equal(await page.locator(".sv-turn-end").count(), 1, "one turn end");
    assert.equal(await page.locator('.sv-root[data-connection="connected"]').count(), 1, "still connected");
  });
});
