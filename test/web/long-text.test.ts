// Long unbroken text stays readable: a 600-character line, a long URL in a
// message and in a thought, a long path in a tool call's and a permission's
// title wrap inside the transcript at phone size (390×844) and at 1400×900,
// instead of running off the screen where nothing can scroll to them.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import { call, feed, openViewPage, type ViewPage } from "./page.ts";
import { n, SESSION_ID, text } from "./fixtures.ts";

const SHOTS = "test-results/web";
const LINE = "x".repeat(600);
const URL_ = `https://example.com/${"very-long-segment/".repeat(20)}end`;
const PATH = `/home/someone/${"deeply/nested/folder/".repeat(15)}file.ts`;

const PERMISSION: RequestPermissionRequest = {
  sessionId: SESSION_ID,
  toolCall: { toolCallId: "call-long", title: `Edit ${PATH}`, kind: "edit", status: "pending" },
  options: [
    { optionId: "allow", name: "Allow once", kind: "allow_once" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ],
};

/** Elements of the transcript whose box reaches past the transcript's right edge. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const transcript = document.querySelector(".sv-transcript")!;
    const right = transcript.getBoundingClientRect().right;
    const out: string[] = [];
    for (const el of Array.from(transcript.querySelectorAll("*"))) {
      if (el.closest("pre")) continue; // code blocks scroll sideways by design
      const box = el.getBoundingClientRect();
      const name = `${el.tagName.toLowerCase()}.${el.className}`;
      if (box.width > 0 && box.right > right + 1) out.push(`${name}: ${Math.round(box.right)} > ${Math.round(right)}`);
      // Text wider than its own box, with no scroll bar to reach it: cut off.
      const scrolls = /auto|scroll/.test(getComputedStyle(el).overflowX);
      if (!scrolls && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) out.push(`${name} cuts its text: ${el.scrollWidth} > ${el.clientWidth}`);
    }
    if (transcript.scrollWidth > transcript.clientWidth + 1) out.push(`transcript scrolls sideways: ${transcript.scrollWidth} > ${transcript.clientWidth}`);
    return out;
  });
}

describe("long unbroken text in the session view", () => {
  let vp: ViewPage;
  before(async () => {
    vp = await openViewPage();
    mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await vp?.close();
  });

  for (const size of [{ width: 390, height: 844 }, { width: 1400, height: 900 }]) {
    test(`a 600-character line, long URLs and long paths wrap at ${size.width}×${size.height} instead of being cut off`, async () => {
      const page = await vp.open(size);
      await feed(page, [
        n({ sessionUpdate: "user_message_chunk", content: text(LINE) }),
        n({ sessionUpdate: "agent_thought_chunk", content: text(`Thinking about ${URL_}`) }),
        n({ sessionUpdate: "agent_message_chunk", content: text(`${LINE}\n\nSee ${URL_} and \`${PATH}\`.`) }),
        n({ sessionUpdate: "tool_call", toolCallId: "call-read", title: `Read ${PATH}`, kind: "read", status: "completed", locations: [{ path: PATH }] }),
      ]);
      await page.locator("details.sv-thought summary, .sv-thought summary").first().click().catch(() => undefined);
      await call(page, "permissionRequested", "req-long", PERMISSION);
      await page.locator('.sv-perm[data-request-id="req-long"]').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/long-text-${size.width}.png`, fullPage: true });
      assert.deepEqual(await overflowing(page), []);
      await page.close();
    });
  }
});
