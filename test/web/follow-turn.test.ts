// The session view follows the turn: the transcript stays at the latest
// message while the reader has not scrolled up, whenever the updates come
// (a block between two frames, a history over many), and says "New messages ↓"
// once they have; the plan is one line that unfolds, and a turn that ends
// early leaves it stopped where it was, live and replayed alike. The view
// alone in headless chromium at 390×844 and 360×740, fed real ACP updates.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { markUpdate } from "../../protocol/history.ts";
import { DEFAULT_FOLLOW_SLACK_PX } from "../../web/session-view/limits.ts";
import { call, feed, hostCalls, nextFrame, openViewPage, settled, type ViewPage } from "./page.ts";
import { AGENT_MARKDOWN, chunks, n, PERMISSION, TURN, text } from "./fixtures.ts";

/** Runs `f` on the element that scrolls the transcript: the log itself or the nearest box around it that scrolls. */
function onScroller<T>(page: Page, f: (scroller: Element) => T): Promise<T> {
  return page.evaluate(`(() => {
    let box = document.querySelector("[role=log]");
    while (box && !/auto|scroll/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
    return (${f.toString()})(box);
  })()`) as Promise<T>;
}

/** How far (pixels) the transcript's end is below what the reader sees. */
function gap(page: Page): Promise<number> {
  return onScroller(page, (s) => s.scrollHeight - s.scrollTop - s.clientHeight);
}

/** Whether the view still follows the turn (it stops only when the person scrolls up). */
function following(page: Page): Promise<boolean> {
  return onScroller(page, (s) => s.classList.contains("sv-following"));
}

/** Scrolls the transcript up by `px`, as the person does. */
async function scrollUp(page: Page, px: number): Promise<void> {
  await page.evaluate(`(() => {
    let box = document.querySelector("[role=log]");
    while (box && !/auto|scroll/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
    // The person's gesture, then the move it makes (a synthetic wheel event does not scroll by itself).
    box.dispatchEvent(new WheelEvent("wheel", { deltaY: -${px}, bubbles: true }));
    box.scrollBy(0, -${px});
  })()`);
  await nextFrame(page);
}

/** Feeds the notifications in `batches`, each in a task of its own (as messages off a socket come), not in one frame. */
async function feedApart(page: Page, batches: SessionNotification[][]): Promise<void> {
  await page.evaluate(async (list) => {
    const { view } = (window as unknown as { sv: { view: { update(n: unknown): void } } }).sv;
    for (const batch of list) {
      for (const x of batch) view.update(x);
      await new Promise((r) => setTimeout(r, 4));
    }
  }, batches);
  await nextFrame(page);
}

/** One turn's worth of blocks: a prompt, a tool call, streamed text. */
function turnOf(i: number): SessionNotification[] {
  return [
    n({ sessionUpdate: "user_message_chunk", content: text(`Prompt number ${i}`), messageId: `u${i}` }),
    n({ sessionUpdate: "tool_call", toolCallId: `tool-${i}`, title: `Read file ${i}`, kind: "read", status: "completed", content: [{ type: "content", content: text("line\n".repeat(6)) }] }),
    ...chunks("agent_message_chunk", AGENT_MARKDOWN, 40).map((x) => ({ ...x, update: { ...x.update, messageId: `a${i}` } }) as SessionNotification),
  ];
}

const PLAN = (statuses: Array<"pending" | "in_progress" | "completed">) =>
  n({
    sessionUpdate: "plan",
    entries: ["Read parse.ts", "Fix the bug in the tokenizer that drops the last character of a quoted string", "Run the tests"].map((content, i) => ({ content, priority: "medium" as const, status: statuses[i]! })),
  });

describe("the session view follows the turn", () => {
  let vp: ViewPage;
  const pages: Page[] = [];
  const fresh = async (size: { width: number; height: number } = { width: 390, height: 844 }): Promise<Page> => {
    const page = await vp.open(size);
    pages.push(page);
    return page;
  };
  before(async () => {
    vp = await openViewPage();
  });
  after(async () => {
    for (const page of pages) await page.close().catch(() => undefined);
    await vp?.close();
  });

  for (const size of [{ width: 390, height: 844 }, { width: 360, height: 740 }]) {
    test(`${size.width}×${size.height}: blocks that come between two frames keep the latest one in view (the view no longer stops following)`, async () => {
      const page = await fresh(size);
      await call(page, "turnStarted");
      // Each turn's blocks in tasks of their own, a few milliseconds apart: several land between two frames.
      await feedApart(page, Array.from({ length: 12 }, (_, i) => turnOf(i)).flatMap((t) => t.map((x) => [x])));
      assert.ok(await following(page), "still following the turn");
      await settled(page);
      assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
      assert.equal(await page.locator(".sv-jump").isVisible(), false, "no 'New messages' while at the end");
    });
  }

  test("a long history that arrives over many frames opens at its latest message", async () => {
    const page = await fresh();
    const history = Array.from({ length: 40 }, (_, i) => turnOf(i)).flat();
    const batches: SessionNotification[][] = [];
    for (let i = 0; i < history.length; i += 25) batches.push(history.slice(i, i + 25));
    await feedApart(page, batches);
    assert.ok(await following(page), "still following the turn");
    await settled(page);
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
    assert.match((await page.locator("article.sv-user").last().textContent()) ?? "", /Prompt number 39/);
  });

  test("regression: a block drawn smaller than its estimate pulled the position up, and the growth right after read as the person scrolling up: the view stopped following", async () => {
    const page = await fresh();
    await feed(page, Array.from({ length: 6 }, (_, i) => turnOf(i)).flat());
    await settled(page);
    assert.ok(await following(page));
    await onScroller(page, (s) => {
      // The last block shrinks (as one drawn at its real size does): the browser pulls scrollTop up to the new end.
      const blocks = s.querySelectorAll<HTMLElement>(".sv-transcript > *");
      const last = blocks[blocks.length - 1]!;
      last.style.height = "0px";
      last.style.overflow = "hidden";
      void s.scrollTop;
      // Then the end grows before any scroll event: more text came.
      const more = document.createElement("div");
      more.style.height = "300px";
      s.querySelector(".sv-transcript")!.append(more);
    });
    await settled(page);
    assert.ok(await following(page), "still following the turn");
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
  });

  test("a box the view puts in the scroller beside the transcript (earlier turns above it) does not take the view from the end", async () => {
    const page = await fresh();
    await feed(page, Array.from({ length: 6 }, (_, i) => turnOf(i)).flat());
    // Every block drawn at its own size (none skipped off screen), and until no height changes over a frame:
    // nothing but the box moves the end.
    await page.evaluate(() => {
      for (const block of Array.from(document.querySelectorAll<HTMLElement>(".sv-transcript > *"))) block.style.contentVisibility = "visible";
    });
    for (let last = -1, height = 0; height !== last; ) {
      last = height;
      await nextFrame(page);
      height = await onScroller(page, (s) => s.scrollHeight);
    }
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX);
    await onScroller(page, (s) => {
      const above = document.createElement("div");
      above.style.height = "10px";
      s.prepend(above);
      // It grows after it came, as a page of earlier turns drawn into it does.
      requestAnimationFrame(() => (above.style.height = "400px"));
    });
    await nextFrame(page);
    await nextFrame(page);
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
  });

  test("scrolled up, new output leaves the view where it is and says 'New messages ↓'; the button goes to the end and follows again", async () => {
    const page = await fresh();
    await feed(page, Array.from({ length: 8 }, (_, i) => turnOf(i)).flat());
    await scrollUp(page, 600);
    const top = await onScroller(page, (s) => s.scrollTop);
    await feedApart(page, [turnOf(8)]);
    assert.equal(await onScroller(page, (s) => s.scrollTop), top, "the reader's place is kept");
    const jump = page.locator(".sv-jump");
    assert.equal(await jump.textContent(), "New messages ↓");
    assert.ok(await jump.isVisible());
    await jump.click();
    await nextFrame(page);
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX);
    assert.equal(await jump.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("sv-scroll")), true, "the focus went with the view, not to the page");
    await feedApart(page, [turnOf(9)]);
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, "it follows again");
  });

  test("a permission request that comes while the reader is scrolled up: the button says so, and the status line says the agent waits, not that it works", async () => {
    const page = await fresh();
    await call(page, "turnStarted");
    await feed(page, Array.from({ length: 6 }, (_, i) => turnOf(i)).flat());
    assert.equal(await page.locator(".sv-turn-status").textContent(), "The agent is working… (Esc to stop)");
    await scrollUp(page, 500);
    await call(page, "permissionRequested", "p1", PERMISSION);
    assert.equal(await page.locator(".sv-jump").textContent(), "Permission request ↓");
    assert.equal(await page.locator(".sv-turn-status").textContent(), "The agent waits for your answer.");
    await page.locator(".sv-jump").click();
    await nextFrame(page);
    const card = page.locator('.sv-perm[data-request-id="p1"]');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("sv-perm")), true, "the request has the focus");
    const box = (await card.boundingBox())!;
    const header = (await page.locator(".sv-header").boundingBox())!;
    const footer = (await page.locator(".sv-footer").boundingBox())!;
    assert.ok(box.y >= header.y + header.height - 1 && box.y + box.height <= footer.y + 1, "the whole request is in view");
    await card.locator('button[data-option-id="allow"]').click();
    assert.equal(await page.locator(".sv-turn-status").textContent(), "The agent is working… (Esc to stop)");
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("sv-perm")), true, "answered, the focus stays on the card, not on the page");
  });

  test("after Allow, the answer that streams below the card stays in view", async () => {
    const page = await fresh();
    await call(page, "turnStarted");
    await feed(page, Array.from({ length: 4 }, (_, i) => turnOf(i)).flat());
    await call(page, "permissionRequested", "p2", PERMISSION);
    const card = page.locator('.sv-perm[data-request-id="p2"]');
    const box = (await card.boundingBox())!;
    const footer = (await page.locator(".sv-footer").boundingBox())!;
    assert.ok(box.y + box.height <= footer.y + 1, "the request is in view when it comes");
    await card.locator('button[data-option-id="allow"]').click();
    await feedApart(page, chunks("agent_message_chunk", AGENT_MARKDOWN.repeat(3), 9).map((x) => [x]));
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the answer's end is in view (${await gap(page)} px below)`);
  });

  test("a prompt sent while scrolled up brings the view to the end, and it follows the turn again", async () => {
    const page = await fresh();
    await feed(page, Array.from({ length: 6 }, (_, i) => turnOf(i)).flat());
    await scrollUp(page, 800);
    await page.locator(".sv-input").fill("And now?");
    await page.locator(".sv-input").press("Enter");
    assert.deepEqual((await hostCalls(page)).filter((c) => c.method === "prompt").map((c) => c.args[0]), ["And now?"]);
    await feedApart(page, [turnOf(6)]);
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
  });

  test("Stop keeps the latest message in view, and its focus goes to Send", async () => {
    const page = await fresh();
    await call(page, "turnStarted");
    await feedApart(page, Array.from({ length: 5 }, (_, i) => turnOf(i)).flatMap((t) => t.map((x) => [x])));
    await page.locator(".sv-stop").focus();
    await page.locator(".sv-stop").click();
    assert.deepEqual((await hostCalls(page)).map((c) => c.method).filter((m) => m === "cancel"), ["cancel"]);
    await call(page, "turnEnded", "cancelled");
    assert.ok((await gap(page)) <= DEFAULT_FOLLOW_SLACK_PX, `the end is in view (${await gap(page)} px below)`);
    assert.equal(await page.evaluate(() => document.activeElement?.className), "sv-send");
  });

  test("the plan is one line, the step the agent is on and n of m, that unfolds to the checklist", async () => {
    const page = await fresh({ width: 360, height: 740 });
    await feed(page, [PLAN(["completed", "in_progress", "pending"])]);
    const plan = page.locator(".sv-plan");
    assert.equal(await plan.locator("summary").textContent(), "Plan 2 of 3 Fix the bug in the tokenizer that drops the last character of a quoted string");
    assert.equal(await plan.evaluate((d) => (d as HTMLDetailsElement).open), false, "folded");
    const line = (await plan.locator("summary").boundingBox())!;
    assert.ok(line.height <= 40, `one line: ${line.height} px`);
    assert.ok(line.x + line.width <= 360, "within the width");
    await plan.locator("summary").click();
    assert.equal(await plan.locator(".sv-plan-entry").count(), 3);
    assert.ok(await plan.locator(".sv-plan-entry").nth(1).isVisible());
    await feed(page, [PLAN(["completed", "completed", "completed"])]);
    assert.equal(await plan.locator("summary").textContent(), "Plan 3 of 3 done");
  });

  test("a cancelled turn leaves its plan stopped where it was, not 'in progress', and a replay of it says the same", async () => {
    const live = await fresh();
    await call(live, "turnStarted");
    await feed(live, [n({ sessionUpdate: "user_message_chunk", content: text("Fix it") }), PLAN(["completed", "in_progress", "pending"])]);
    await call(live, "turnEnded", "cancelled");
    const plan = live.locator(".sv-plan");
    assert.equal(await plan.locator(".sv-plan-count").textContent(), "Cancelled at 2 of 3");
    assert.equal(await plan.getAttribute("data-stopped"), "cancelled");
    assert.deepEqual(await plan.locator(".sv-status").allTextContents(), ["completed", "stopped", "pending"]);
    assert.equal(await plan.locator("input").nth(1).evaluate((b) => (b as HTMLInputElement).indeterminate), false);

    // A reload: the journal's updates and the turn's end as its mark.
    const replay = await fresh();
    await feed(replay, [n({ sessionUpdate: "user_message_chunk", content: text("Fix it") }), PLAN(["completed", "in_progress", "pending"]), n(markUpdate({ turnEnd: { stopReason: "cancelled" } }))]);
    const replayed = replay.locator(".sv-plan");
    assert.equal(await replayed.locator("summary").textContent(), await plan.locator("summary").textContent());
    assert.equal(await replayed.locator(".sv-plan-list").innerHTML(), await plan.locator(".sv-plan-list").innerHTML());
  });

  test("a failed turn leaves its plan 'Failed at' its step, live and replayed", async () => {
    const live = await fresh();
    await call(live, "turnStarted");
    await feed(live, [PLAN(["in_progress", "pending", "pending"])]);
    await call(live, "turnFailed", "The agent exited");
    assert.equal(await live.locator(".sv-plan-count").textContent(), "Failed at 1 of 3");
    assert.equal(await live.locator(".sv-error").last().textContent(), "The agent exited");
    assert.equal(await live.locator(".sv-stop").isVisible(), false);

    const replay = await fresh();
    await feed(replay, [PLAN(["in_progress", "pending", "pending"]), n(markUpdate({ turnEnd: { error: "The agent exited" } }))]);
    assert.equal(await replay.locator(".sv-plan-count").textContent(), "Failed at 1 of 3");
    // The next turn's plan starts afresh.
    await feed(replay, [PLAN(["completed", "in_progress", "pending"])]);
    assert.equal(await replay.locator(".sv-plan-count").textContent(), "2 of 3");
    assert.equal(await replay.locator(".sv-plan").getAttribute("data-stopped"), null);
  });

  test("the heading is the session's title; when the agent clears its own, the title the session was first given is back", async () => {
    const page = await fresh();
    const title = page.locator("h1.sv-title");
    assert.equal(await title.textContent(), "Session");
    await feed(page, [n({ sessionUpdate: "session_info_update", title: "Fix the parser" })]);
    assert.equal(await title.textContent(), "Fix the parser");
    await feed(page, [n({ sessionUpdate: "session_info_update", title: "Parser fixes (agent)" })]);
    assert.equal(await title.textContent(), "Parser fixes (agent)");
    await feed(page, [n({ sessionUpdate: "session_info_update", title: null })]);
    assert.equal(await title.textContent(), "Fix the parser");
    // A mark of the history names nothing.
    await feed(page, [n(markUpdate({ turnEnd: { stopReason: "end_turn" } }))]);
    assert.equal(await title.textContent(), "Fix the parser");
    assert.equal(await page.locator("h1").count(), 1, "one heading");
  });

  test("the whole turn renders without a CSP violation", async () => {
    const page = await fresh();
    await feed(page, TURN);
    assert.deepEqual(await page.evaluate(() => (window as unknown as { sv: { violations: string[] } }).sv.violations), []);
  });
});
