// The web client end to end: a real `acp-remote serve` child with the demo
// agent, chromium at phone size. Pairing link in, fragment out; a new session,
// a prompt with streamed Markdown, the permission answered inline, a turn
// cancelled with the stop button, a reload that resumes the same session
// without showing anything twice, the plain message for a refused token, and
// a prompt over Streamable HTTP when the page has no WebSocket.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { openPhone, type Phone } from "./browser.ts";
import type { DemoServe } from "./serve-demo.ts";
import { demoInBrowser } from "../helpers/demo-in-browser.ts";
import { send, startSession } from "../helpers/phone-steps.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";

const TOKEN = "web-client-token-0123456789";
const HOW_TO_PAIR =
  "To pair: in VS Code, run ACP Remote: Connect a Device and scan its QR code; for a server started in a terminal (acp-remote serve, npm start), open the pairing link it printed when it started.";
const NOT_ACCEPTED = `The server did not accept this pairing link: it may be mistyped, cut short or from another server. ${HOW_TO_PAIR}`;
const UNPAIRED = `This device is no longer paired. ${HOW_TO_PAIR}`;

describe("web client in a browser", () => {
  let server: DemoServe;
  let browser: Browser;
  const phones: Phone[] = [];
  const phone = async (options?: Parameters<typeof openPhone>[2], origin = server.url): Promise<Phone> => {
    const p = await openPhone(browser, origin, options);
    phones.push(p);
    return p;
  };
  /** Runs `steps` on a page paired through a proxy of its own, on a session it started: the proxy can take the network away. */
  const throughProxy = async (steps: (page: Page, proxy: TcpProxy) => Promise<void>): Promise<void> => {
    const proxy = await startTcpProxy(server.port);
    try {
      const origin = `http://127.0.0.1:${proxy.port}`;
      const { page } = await phone(undefined, origin);
      await page.goto(`${origin}/#token=${TOKEN}`);
      await startSession(page);
      await steps(page, proxy);
    } finally {
      await proxy.close();
    }
  };

  before(async () => {
    ({ server, browser } = await demoInBrowser({ token: TOKEN, env: { ACP_REMOTE_DEMO_DELAY_MS: "1" } }));
  });
  after(async () => {
    for (const p of phones) {
      assert.deepEqual(await p.violations().catch(() => []), [], "no CSP violation");
      assert.deepEqual(p.foreign, [], "no request to another host");
    }
    await browser?.close();
    await server?.close();
  });

  test("pair, prompt, approve, cancel, reload and resume", async () => {
    const { page } = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    assert.equal(page.url(), `${server.url}/`, "the token left the address bar");
    assert.ok(!(await page.evaluate(() => history.length > 0 && location.href.includes("token"))));
    assert.equal(await page.evaluate(() => localStorage.getItem("acp-remote.token")), TOKEN);
    await page.locator(".wc-status", { hasText: "No sessions yet." }).waitFor();

    await startSession(page);
    assert.equal(await page.locator(".wc-link").getAttribute("data-profile"), "websocket");
    await send(page, "Show me **everything**");
    // Streamed Markdown arrives rendered: the demo's `--agent NAME=COMMAND` is inline code.
    await page.locator(".sv-agent .sv-body code", { hasText: "--agent NAME=COMMAND" }).first().waitFor();
    const permission = page.locator(".sv-perm").first();
    await permission.locator('button[data-option-id="allow_once"]').click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    await page.locator(".sv-agent", { hasText: "You approved the edit (allow once)" }).waitFor();
    assert.match((await permission.textContent()) ?? "", /Allow once/);

    // A second turn, stopped while it waits for permission.
    await send(page, "Again, please");
    await page.locator(".sv-perm").nth(1).locator("button").first().waitFor();
    await page.locator(".sv-stop").click();
    await page.locator('.sv-turn-end[data-stop-reason="cancelled"]').waitFor();
    assert.equal(await page.locator(".sv-stop").isVisible(), false, "the stop button is gone");

    const before = await transcriptShape(page);
    assert.equal(before.user, 2);
    const url = page.url();
    await page.reload();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    assert.equal(page.url(), url, "the same session");
    await showEarlier(page);
    await page.locator(".sv-msg.sv-user").nth(1).waitFor();
    await page.locator(".sv-agent", { hasText: "You approved the edit" }).waitFor();
    const afterReload = await transcriptShape(page);
    assert.equal(afterReload.user, 2, "each prompt shows once");
    assert.equal(afterReload.tools, before.tools, "each tool call shows once");
    assert.equal(afterReload.approved, 1, "the answer to the permission request shows once");

    // The list has the session, with its folder.
    await page.locator(".wc-back").click();
    const item = page.locator(".wc-item");
    await item.first().waitFor();
    assert.equal(await item.count(), 1);
    assert.match((await item.textContent()) ?? "", new RegExp(server.cwd.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    // Tapping it opens the session again.
    await item.click();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    await showEarlier(page);
    await page.locator(".sv-msg.sv-user").nth(1).waitFor();
    assert.equal((await transcriptShape(page)).user, 2);
  });

  test("a reload during a turn shows it running, offers its permission request again, and sees it end", async () => {
    const { page } = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await startSession(page);
    await send(page, "Wait for me");
    await page.locator(".sv-perm button").first().waitFor();
    await page.reload();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    // The turn is still running on the server: the stop button shows, and the request is offered again.
    await page.locator(".sv-stop").waitFor();
    assert.equal(await page.locator(".sv-msg.sv-user").count(), 1);
    await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
    await page.locator(".sv-agent", { hasText: "That is the whole tour" }).waitFor();
    // Its answer went to the page before the reload; session/list tells that it ended.
    await page.locator(".sv-stop").waitFor({ state: "hidden" });
    assert.equal(await page.locator(".sv-perm").count(), 1, "the request shows once");
  });

  test("a dropped network reconnects, replays the session once and keeps the draft", async () => {
    await throughProxy(async (page, proxy) => {
      await send(page, "Before the drop");
      await page.locator(".sv-perm button").first().waitFor();
      await page.locator(".sv-input").fill("a draft not sent yet");
      proxy.block();
      proxy.cut();
      await page.locator('.sv-root[data-connection="reconnecting"]').waitFor();
      proxy.unblock();
      await page.locator('.sv-root[data-connection="connected"]').waitFor();
      assert.equal(await page.locator(".sv-input").inputValue(), "a draft not sent yet");
      await page.locator(".sv-perm button").first().waitFor();
      assert.equal(await page.locator(".sv-msg.sv-user").count(), 1, "the prompt shows once");
      assert.equal(await page.locator(".sv-perm").count(), 1, "the request shows once");
      await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
      await page.locator(".sv-agent", { hasText: "That is the whole tour" }).waitFor();
      await page.locator(".sv-stop").waitFor({ state: "hidden" });
    });
  });

  test("a prompt typed while offline is not lost: it stays in the box, Send waits for the link, then it is sent once", async () => {
    await throughProxy(async (page, proxy) => {
      proxy.block();
      proxy.cut();
      await page.locator('.sv-root[data-connection="reconnecting"]').waitFor();
      await send(page, "Typed while offline");
      assert.equal(await page.locator(".sv-input").inputValue(), "Typed while offline", "Enter keeps the text");
      assert.equal(await page.locator(".sv-send").isDisabled(), true, "Send waits for the link");
      assert.equal(await page.locator(".sv-msg.sv-user").count(), 0, "nothing shows as sent");
      proxy.unblock();
      await page.locator('.sv-root[data-connection="connected"]').waitFor();
      assert.equal(await page.locator(".sv-send").isDisabled(), false);
      await page.locator(".sv-input").press("Enter");
      await page.locator(".sv-msg.sv-user", { hasText: "Typed while offline" }).waitFor();
      assert.equal(await page.locator(".sv-input").inputValue(), "");
      await page.locator(".sv-perm button[data-option-id=reject_once]").click();
      await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
      assert.equal(await page.locator(".sv-msg.sv-user").count(), 1, "the prompt shows once");
    });
  });

  test("a new session whose answer is lost with the link is made once: the page's retry gets the session the first try made", async () => {
    // The page's first WebSocket drops the moment the answer to session/new
    // reaches it, before the page reads it: the server made the session and
    // answered, and the page never learnt of it.
    const { page } = await phone({
      init: () => {
        const Native = window.WebSocket;
        const counted = window as unknown as { lostAnswers: number };
        counted.lostAnswers = 0;
        class LinkThatDrops extends Native {
          constructor(url: string | URL, protocols?: string | string[]) {
            super(url, protocols);
            let newSessionId: unknown;
            const send = this.send.bind(this);
            this.send = (data) => {
              if (counted.lostAnswers === 0 && typeof data === "string") {
                const message = JSON.parse(data) as { id?: unknown; method?: string };
                if (message.method === "session/new") newSessionId = message.id;
              }
              send(data);
            };
            // Added before the page's own listener, so it runs first and can keep the answer from it.
            this.addEventListener("message", (event) => {
              if (newSessionId === undefined || typeof event.data !== "string") return;
              const message = JSON.parse(event.data) as { id?: unknown; method?: string };
              if (message.id !== newSessionId || message.method !== undefined) return;
              newSessionId = undefined;
              counted.lostAnswers += 1;
              event.stopImmediatePropagation();
              this.close();
            });
          }
        }
        window.WebSocket = LinkThatDrops;
      },
    });
    const before = await serverSessions(server.url);
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await startSession(page);
    assert.equal(await page.evaluate(() => (window as unknown as { lostAnswers: number }).lostAnswers), 1, "the first answer was lost");
    const sessionId = decodeURIComponent(page.url().split("/").pop() ?? "");
    const after = await serverSessions(server.url);
    assert.deepEqual(after.filter((id) => !before.includes(id)), [sessionId], "one new session on the server, the page's");
    // What the agent sent the session after its answer reached the page with the retry's replay: its slash commands.
    await page.locator(".sv-input").fill("/");
    await page.locator('.sv-completion[data-name="help"]').waitFor();
  });

  test("two pages on one session: the second follows the first's turn, and a permission answered on the first is 'answered elsewhere' on the second", async () => {
    const { page: first } = await phone();
    await first.goto(`${server.url}/#token=${TOKEN}`);
    await startSession(first);
    const sessionUrl = first.url();
    const { page: second } = await phone();
    await second.goto(`${server.url}/#token=${TOKEN}`);
    await second.locator(".wc-list").waitFor();
    await second.goto(sessionUrl);
    await second.locator('.sv-root[data-connection="connected"]').waitFor();

    await send(first, "From the first page");
    // session/attach: the second page follows too, instead of taking the session from the first.
    await second.locator(".sv-msg.sv-user", { hasText: "From the first page" }).waitFor();
    // The request reaches both; the second page joined with session/attach, so
    // it also learns that the first answered it (the proposal's notice).
    await second.locator(".sv-perm button[data-option-id=allow_once]").waitFor();
    await first.locator(".sv-perm button[data-option-id=allow_once]").click();
    await second.locator('.sv-perm[data-settled="answered elsewhere"]').waitFor();
    await first.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    await second.locator(".sv-agent", { hasText: "You approved the edit (allow once)" }).waitFor();
    assert.equal(await first.locator(".sv-msg.sv-user").count(), 1, "the first page shows its prompt once");
  });

  test("a mistyped pairing link says so and how to pair, for the editor and for a server started in a terminal", async () => {
    const { page } = await phone();
    await page.goto(`${server.url}/#token=not-the-token`);
    const message = page.locator(".wc-message");
    await message.waitFor();
    assert.equal((await message.textContent())?.trim(), NOT_ACCEPTED);
    assert.equal(await message.getAttribute("data-reason"), "not-accepted");
  });

  test("a stored token the server no longer accepts says the device is no longer paired, and a new link pairs again", async () => {
    const { page } = await phone();
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await page.evaluate(() => localStorage.setItem("acp-remote.token", "a-token-since-revoked"));
    await page.reload();
    const message = page.locator(".wc-message");
    await message.waitFor();
    assert.equal((await message.textContent())?.trim(), UNPAIRED);
    assert.equal(page.url(), `${server.url}/`);
    await page.locator("#wc-link-input").fill(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-signin-form button").click();
    await page.locator(".wc-list").waitFor();
  });

  test("without WebSocket the page runs a prompt over Streamable HTTP", async () => {
    const { page } = await phone({
      init: () => {
        delete (window as { WebSocket?: unknown }).WebSocket;
      },
    });
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await startSession(page);
    assert.equal(await page.locator(".wc-link").getAttribute("data-profile"), "http");
    await send(page, "Over plain HTTP");
    await page.locator(".sv-perm button[data-option-id=reject_once]").click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
    await page.locator(".sv-agent", { hasText: "You rejected the edit" }).waitFor();
  });
});

/** The ids of the sessions the server holds for the token's person, asked over a WebSocket of the test's own. */
async function serverSessions(url: string): Promise<string[]> {
  const opened = await WsTestClient.open(`${url}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.ok(!isRefusal(opened), "the handshake is accepted");
  try {
    opened.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    assert.equal((await opened.next())["id"], 0);
    opened.send({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} });
    const answer = (await opened.next()) as { result: { sessions: Array<{ sessionId: string }> } };
    return answer.result.sessions.map((s) => s.sessionId);
  } finally {
    await opened.close();
  }
}

/** Brings the turns before the latest, which a session opens without (docs/transport.md, "Pages of a replay"). */
async function showEarlier(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const more = document.querySelector<HTMLButtonElement>(".sv-earlier-more");
      if (more === null || more.hidden) return true;
      if (!more.disabled) more.click();
      return false;
    },
    undefined,
    { polling: 100 },
  );
}

async function transcriptShape(page: Page): Promise<{ user: number; tools: number; approved: number }> {
  return page.evaluate(() => ({
    user: document.querySelectorAll(".sv-msg.sv-user").length,
    tools: document.querySelectorAll(".sv-tool").length,
    approved: Array.from(document.querySelectorAll(".sv-agent")).filter((e) => e.textContent?.includes("You approved the edit")).length,
  }));
}
