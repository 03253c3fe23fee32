// Bad input shown inert and bounded: hostile Markdown never runs script nor
// makes the page fetch anything, and a 5 MB message stays cheap to draw.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { call, cspViolations, feed, openViewPage, type ViewPage } from "./page.ts";
import { n, text } from "./fixtures.ts";
import { DEFAULT_MARKDOWN_MAX_CHARS, DEFAULT_PLAIN_PREVIEW_CHARS } from "../../web/session-view/limits.ts";

const HOSTILE = [
  "<script>window.pwned = 'script'</script>",
  '<img src="x" onerror="window.pwned = \'img\'">',
  "[click me](javascript:window.pwned='link')",
  "[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cucHduZWQ9MTwvc2NyaXB0Pg==)",
  "[relative](/acp?token=1)",
  '<a href="javascript:window.pwned=1">raw anchor</a>',
  "![tracker](https://tracker.example/pixel.png)",
  "<iframe src=\"https://evil.example\"></iframe>",
  "<style>body { display: none }</style>",
  "`<b>in code</b>`",
].join("\n\n");

describe("session view with hostile input", () => {
  let vp: ViewPage;
  let page: Page;
  const requests: string[] = [];
  before(async () => {
    vp = await openViewPage();
    page = vp.page;
    page.on("request", (r) => requests.push(r.url()));
  });
  after(async () => {
    await vp?.close();
  });

  test("hostile Markdown in agent and user messages is shown inert", async () => {
    await feed(page, [
      n({ sessionUpdate: "user_message_chunk", content: text(HOSTILE) }),
      n({ sessionUpdate: "agent_message_chunk", content: text(HOSTILE) }),
      n({ sessionUpdate: "agent_thought_chunk", content: text(HOSTILE) }),
    ]);
    const transcript = page.locator(".sv-transcript");
    assert.equal(await page.evaluate(() => (window as { pwned?: unknown }).pwned), undefined);
    assert.equal(await transcript.locator("script, img, iframe, style, [onerror]").count(), 0);
    // Raw HTML stays visible as text.
    assert.match((await page.locator("article.sv-agent").textContent()) ?? "", /<script>window\.pwned = 'script'<\/script>/);
    const hrefs = await transcript.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    // Only absolute http(s) links survive (the image's source, and a URL in raw HTML text, linkified).
    assert.deepEqual(new Set(hrefs), new Set(["https://tracker.example/pixel.png", "https://evil.example", null]));
    assert.equal(await transcript.locator("a[href]:not([rel='noopener noreferrer'])").count(), 0);
    // A relative link would navigate the page itself (and carry what it points at): its href goes.
    assert.equal(await page.locator("article.sv-agent a", { hasText: "relative" }).getAttribute("href"), null);
    assert.equal(await transcript.locator("code").first().textContent(), "<b>in code</b>");
  });

  test("clicking a stripped javascript: link runs nothing", async () => {
    await page.locator("article.sv-agent").getByText("click me").click();
    await page.locator("article.sv-agent").getByText("raw anchor").click();
    assert.equal(await page.evaluate(() => (window as { pwned?: unknown }).pwned), undefined);
  });

  test("an image in a message becomes a link and is never fetched", async () => {
    assert.equal(requests.filter((u) => u.includes("tracker.example")).length, 0);
    assert.deepEqual(await cspViolations(page), []);
  });

  test("hostile tool call titles, paths and permission options are text", async () => {
    await feed(page, [
      n({
        sessionUpdate: "tool_call",
        toolCallId: "<img src=x onerror=window.pwned=2>",
        title: "<img src=x onerror=window.pwned=3>",
        kind: "edit",
        locations: [{ path: "<script>window.pwned=4</script>" }],
        content: [{ type: "diff", path: "<b>p</b>", oldText: "<script>window.pwned=5</script>", newText: "<img src=x onerror=window.pwned=6>" }],
      }),
    ]);
    await call(page, "permissionRequested", "<x>", {
      sessionId: "s",
      toolCall: { toolCallId: "t", title: "<img src=x onerror=window.pwned=7>" },
      options: [{ optionId: "<o>", name: "<img src=x onerror=window.pwned=8>", kind: "allow_once" }],
    });
    assert.equal(await page.locator(".sv-transcript img, .sv-transcript script").count(), 0);
    assert.equal(await page.locator(".sv-tool-title").last().textContent(), "<img src=x onerror=window.pwned=3>");
    assert.equal(await page.evaluate(() => (window as { pwned?: unknown }).pwned), undefined);
  });

  test("a malformed update shows an error instead of throwing into the host", async () => {
    const thrown = await page.evaluate(() => {
      const { view } = (window as unknown as { sv: { view: { update(n: unknown): void } } }).sv;
      try {
        view.update({ sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "bad", title: "Bad", content: [{ type: "content" }] } });
        view.update({ sessionId: "s", update: { sessionUpdate: "agent_message_chunk" } });
        return null;
      } catch (err) {
        return String(err);
      }
    });
    assert.equal(thrown, null);
    const errors = await page.locator(".sv-error[role=alert]").allTextContents();
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /^Could not show an update \(tool_call\): /);
    assert.match(errors[1]!, /^Could not show an update \(agent_message_chunk\): /);
  });

  test("an update kind this view does not know is ignored", async () => {
    const before = await page.locator(".sv-transcript > *").count();
    await feed(page, [{ sessionId: "s", update: { sessionUpdate: "from_a_newer_agent", anything: 1 } } as unknown as Parameters<typeof feed>[1][number]]);
    assert.equal(await page.locator(".sv-transcript > *").count(), before);
  });

  test("a 5 MB message streamed in 1 MB chunks is drawn bounded, with Show all", async () => {
    const fresh = await vp.open();
    try {
      const mb = "x".repeat(99) + "\n";
      const megabyte = mb.repeat(10_486);
      const started = Date.now();
      for (let i = 0; i < 5; i++) await feed(fresh, [n({ sessionUpdate: "agent_message_chunk", content: text(megabyte) })]);
      await call(fresh, "turnEnded", "end_turn");
      const elapsed = Date.now() - started;
      const shown = await fresh.locator("article.sv-agent pre.sv-plain").evaluate((p) => p.textContent!.length);
      assert.equal(shown, DEFAULT_PLAIN_PREVIEW_CHARS);
      assert.ok(megabyte.length * 5 > DEFAULT_MARKDOWN_MAX_CHARS);
      const more = fresh.getByRole("button", { name: /^Show all/ });
      assert.match((await more.textContent()) ?? "", /Show all \(5\.\d M characters more\)/);
      assert.ok(elapsed < 30_000, `took ${elapsed} ms`);
      await more.click();
      const all = await fresh.locator("article.sv-agent pre.sv-plain").evaluate((p) => p.textContent!.length);
      assert.equal(all, megabyte.length * 5);
      assert.equal(await more.count(), 0);
    } finally {
      await fresh.close();
    }
  });

  test("a 5 MB tool output is drawn bounded", async () => {
    const fresh = await vp.open();
    try {
      await feed(fresh, [n({ sessionUpdate: "tool_call", toolCallId: "big", title: "cat big.log", kind: "read", content: [{ type: "content", content: text("y".repeat(5_000_000)) }] })]);
      const shown = await fresh.locator("pre.sv-tool-text").evaluate((p) => p.textContent!.length);
      assert.ok(shown < 100_000, `${shown} characters drawn`);
      assert.equal(await fresh.getByRole("button", { name: /^Show all/ }).count(), 1);
    } finally {
      await fresh.close();
    }
  });
});
