// The session view drawn from a scripted turn of real session/update
// notifications in headless chromium, under a strict CSP; asserted by DOM.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { call, cspViolations, feed, hostCalls, openViewPage, type ViewPage } from "./page.ts";
import { AGENT_MARKDOWN, chunks, n, PERMISSION, TURN, text } from "./fixtures.ts";

describe("session view rendering", () => {
  let vp: ViewPage;
  let page: Page;
  before(async () => {
    vp = await openViewPage();
    page = vp.page;
    await call(page, "turnStarted");
    await feed(page, TURN);
  });
  after(async () => {
    await vp?.close();
  });

  test("agent text streamed in chunks renders as one Markdown message", async () => {
    const agent = page.locator("article.sv-agent");
    assert.equal(await agent.count(), 1);
    assert.equal(await agent.locator("strong").first().textContent(), "fix");
    assert.equal(await agent.locator("li").count(), 2);
    assert.match((await agent.locator("pre code").textContent()) ?? "", /return JSON\.parse\(s\);/);
  });

  test("user message renders as its own message", async () => {
    assert.equal(await page.locator("article.sv-user .sv-body p").textContent(), "Fix the parser please");
  });

  test("a link opens outside the page without an opener", async () => {
    const link = page.locator("article.sv-agent a");
    assert.equal(await link.getAttribute("href"), "https://example.com/docs");
    assert.equal(await link.getAttribute("target"), "_blank");
    assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
  });

  test("code block has a copy button that copies its code", async () => {
    const button = page.locator("article.sv-agent .sv-code button.sv-copy");
    assert.equal(await button.getAttribute("aria-label"), "Copy code");
    await button.click();
    await page.waitForFunction(() => document.querySelector(".sv-copy")?.textContent === "Copied");
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, "export function parse(s: string) {\n  return JSON.parse(s);\n}\n");
  });

  test("thought is folded in a closed details element", async () => {
    const thought = page.locator("details.sv-thought");
    assert.equal(await thought.count(), 1);
    assert.equal(await thought.evaluate((d) => (d as HTMLDetailsElement).open), false);
    assert.equal(await thought.locator(".sv-body p").textContent(), "I should read parse.ts first.");
  });

  test("plan renders as a checklist with each entry's status", async () => {
    const entries = page.locator(".sv-plan .sv-plan-entry");
    assert.equal(await entries.count(), 3);
    assert.deepEqual(await entries.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset["status"])), ["completed", "in_progress", "pending"]);
    assert.deepEqual(
      await page.locator(".sv-plan input[type=checkbox]").evaluateAll((els) => els.map((e) => [(e as HTMLInputElement).checked, (e as HTMLInputElement).indeterminate])),
      [
        [true, false],
        [false, true],
        [false, false],
      ],
    );
    assert.equal(await page.locator(".sv-plan summary").textContent(), "Plan 2 of 3 Fix the bug");
  });

  test("a new plan replaces the old one", async () => {
    await feed(page, [n({ sessionUpdate: "plan", entries: [{ content: "Only step", priority: "low", status: "completed" }] })]);
    assert.equal(await page.locator(".sv-plan .sv-plan-entry").count(), 1);
    await feed(page, TURN.filter((x) => x.update.sessionUpdate === "plan"));
  });

  test("tool call shows kind, status, title, locations and is updated in place", async () => {
    const card = page.locator('[data-tool-call-id="call-1"]');
    assert.equal(await card.count(), 1);
    assert.equal(await card.locator(".sv-kind").textContent(), "read");
    assert.equal(await card.locator(".sv-status").textContent(), "completed");
    assert.equal(await card.locator(".sv-tool-title").textContent(), "Read src/parse.ts");
    assert.equal(await card.locator(".sv-locations li").textContent(), "src/parse.ts:3");
    assert.equal(await card.locator(".sv-tool-text p").textContent(), "export function parse() {}");
  });

  test("tool call with a diff shows removed and added lines", async () => {
    const card = page.locator('[data-tool-call-id="call-2"]');
    assert.equal(await card.locator(".sv-diff figcaption").textContent(), "Diff src/parse.ts", "the phone's host opens no diffs: no Open Diff button");
    assert.deepEqual(await card.locator(".sv-del").allTextContents(), ["- old line\n"]);
    assert.deepEqual(await card.locator(".sv-add").allTextContents(), ["+ new line\n"]);
    assert.equal(await card.locator(".sv-same").count(), 2);
  });

  test("tool call with a terminal shows the terminal's id", async () => {
    assert.equal(await page.locator('[data-tool-call-id="call-3"] .sv-terminal').getAttribute("data-terminal-id"), "term-7");
  });

  test("permission buttons answer with the chosen option id, then go", async () => {
    await call(page, "permissionRequested", 41, PERMISSION);
    const card = page.locator('.sv-perm[data-request-id="41"]');
    assert.deepEqual(await card.locator("button").allTextContents(), ["Allow once", "Always allow", "Reject"]);
    await card.locator('button[data-option-id="always"]').click();
    const answers = (await hostCalls(page)).filter((c) => c.method === "answerPermission");
    assert.deepEqual(answers, [{ method: "answerPermission", args: [41, "always"] }]);
    assert.equal(await card.locator("button").count(), 0);
    await call(page, "permissionSettled", 41, "answered here");
    assert.equal(await card.locator(".sv-perm-outcome").textContent(), "Allowed here — Always allow");
  });

  test("a withdrawn permission request loses its buttons and says so", async () => {
    await call(page, "permissionRequested", "req-2", PERMISSION);
    const card = page.locator('.sv-perm[data-request-id="req-2"]');
    assert.equal(await card.locator("button").count(), 3);
    await call(page, "permissionSettled", "req-2", "withdrawn");
    assert.equal(await card.locator("button").count(), 0);
    assert.equal(await card.locator(".sv-perm-outcome").textContent(), "Withdrawn");
  });

  test("a permission answered elsewhere loses its buttons and says so", async () => {
    await call(page, "permissionRequested", "req-3", PERMISSION);
    await call(page, "permissionSettled", "req-3", "answered elsewhere");
    const card = page.locator('.sv-perm[data-request-id="req-3"]');
    assert.equal(await card.locator("button").count(), 0);
    assert.equal(await card.locator(".sv-perm-outcome").textContent(), "Answered elsewhere");
  });

  test("the stop reason shows at the end of the turn", async () => {
    await call(page, "turnEnded", "end_turn");
    assert.equal(await page.locator(".sv-turn-end").last().getAttribute("data-stop-reason"), "end_turn");
    assert.equal(await page.locator(".sv-turn-end").last().textContent(), "Turn ended");
    assert.equal(await page.locator(".sv-body[aria-busy=true]").count(), 0);
  });

  test("an error shows as an alert", async () => {
    await call(page, "error", "The agent exited");
    assert.equal(await page.locator(".sv-error[role=alert]").last().textContent(), "The agent exited");
  });

  test("the transcript is a log with polite announcements", async () => {
    const log = page.locator(".sv-transcript");
    assert.equal(await log.getAttribute("role"), "log");
    assert.equal(await log.getAttribute("aria-live"), "polite");
  });

  test("a replay renders the same DOM as the live turn", async () => {
    const live = await page.locator(".sv-transcript").evaluate((t) => {
      const copy = t.cloneNode(true) as HTMLElement;
      copy.querySelectorAll(".sv-perm, .sv-turn-end, .sv-error").forEach((e) => e.remove());
      copy.querySelectorAll(".sv-copy").forEach((b) => (b.textContent = "Copy"));
      return copy.innerHTML;
    });
    const replay = await vp.open();
    try {
      await feed(replay, TURN);
      await call(replay, "turnEnded", "end_turn");
      const replayed = await replay.locator(".sv-transcript").evaluate((t) => {
        const copy = t.cloneNode(true) as HTMLElement;
        copy.querySelectorAll(".sv-turn-end").forEach((e) => e.remove());
        return copy.innerHTML;
      });
      assert.equal(replayed, live);
    } finally {
      await replay.close();
    }
  });

  test("chunks with a new messageId start a new message", async () => {
    await feed(page, [
      n({ sessionUpdate: "agent_message_chunk", content: text("first"), messageId: "m1" }),
      n({ sessionUpdate: "agent_message_chunk", content: text("second"), messageId: "m2" }),
    ]);
    assert.deepEqual((await page.locator("article.sv-agent .sv-body > p").allTextContents()).slice(-2), ["first", "second"]);
  });

  test("the page runs under the strict CSP without a violation", async () => {
    assert.deepEqual(await cspViolations(page), []);
  });

  test("streamed text is re-rendered once a frame, not once a chunk", async () => {
    const fresh = await vp.open();
    try {
      const renders = await fresh.evaluate(async (list) => {
        const { view } = (window as unknown as { sv: { view: { update(n: unknown): void } } }).sv;
        let mutations = 0;
        const target = document.querySelector(".sv-transcript")!;
        const observer = new MutationObserver((records) => (mutations += records.length));
        observer.observe(target, { childList: true, subtree: true });
        for (const x of list) view.update(x);
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        observer.disconnect();
        return mutations;
      }, chunks("agent_message_chunk", AGENT_MARKDOWN, 2));
      // One article added, then its body's children replaced once: far fewer than the 70 chunks.
      assert.ok(renders <= 6, `${renders} mutation records for 70 chunks`);
    } finally {
      await fresh.close();
    }
  });
});
