// An interrupted turn in the session view (protocol/history.ts): live, the
// tool call's failed update that says why, the request withdrawn and the
// prompt's error; replayed, the folded tool call and the marks. Both say the
// turn was interrupted in words and draw the tool card as interrupted, not
// pending, and the replay draws what the live view drew.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { INTERRUPTION_WORDS, interruptedToolCall, markUpdate, type TurnInterruption } from "../../protocol/history.ts";
import { markup } from "../helpers/transcript-markup.ts";
import { n, PERMISSION, text } from "./fixtures.ts";
import { call, feed, openViewPage, type ViewPage } from "./page.ts";

const TOOL_CALL_ID = PERMISSION.toolCall.toolCallId;

describe("an interrupted turn in the session view", () => {
  let vp: ViewPage;
  const pages: Page[] = [];

  before(async () => {
    vp = await openViewPage();
  });

  after(async () => {
    for (const page of pages) await page.close().catch(() => undefined);
    await vp?.close();
  });

  for (const [interrupted, detail] of [["agent-exited", " (agent fixture was killed by SIGKILL)"], ["server-stopped", ""]] as Array<[TurnInterruption, string]>) {
    const message = `${INTERRUPTION_WORDS[interrupted]}${detail}`;
    test(`regression: a turn cut off while a permission waited left its tool card "pending" for ever; it shows "${INTERRUPTION_WORDS[interrupted]}" and an interrupted tool card, live and replayed alike`, async () => {
      const live = await vp.open();
      const replay = await vp.open();
      pages.push(live, replay);
      const prompt = n({ sessionUpdate: "user_message_chunk", content: text("Edit the README") });
      const pending = n({ sessionUpdate: "tool_call", toolCallId: TOOL_CALL_ID, title: PERMISSION.toolCall.title ?? "", kind: "edit", status: "pending" });

      // Live, as a page that follows the session is told it.
      await feed(live, [prompt]);
      await call(live, "turnStarted");
      await feed(live, [pending]);
      await call(live, "permissionRequested", "p1", PERMISSION);
      await call(live, "permissionSettled", "p1", { by: "interrupted" });
      await feed(live, [n(interruptedToolCall(TOOL_CALL_ID, interrupted))]);
      await call(live, "turnFailed", message);

      // Replayed, as the journal gives it (the tool call's updates folded into it).
      await feed(replay, [
        prompt,
        n({ ...pending.update, status: "failed", _meta: { acpRemote: { interrupted } } } as typeof pending.update),
        n(markUpdate({ permission: { toolCall: PERMISSION.toolCall, options: PERMISSION.options, outcome: { outcome: "cancelled" }, settledBy: "interrupted" } })),
        n(markUpdate({ turnEnd: { error: message, interrupted } })),
      ]);

      for (const page of [live, replay]) {
        const transcript = page.locator(".sv-transcript");
        assert.equal((await transcript.locator(".sv-error").last().textContent())?.trim(), message);
        const card = transcript.locator(`.sv-tool[data-tool-call-id="${TOOL_CALL_ID}"]`);
        assert.equal(await card.getAttribute("data-status"), "interrupted");
        assert.match((await card.locator(".sv-status").textContent()) ?? "", /interrupted/i);
        assert.match((await transcript.locator(".sv-perm").textContent()) ?? "", /Withdrawn/);
        // Nothing is left waiting: the composer takes a new prompt.
        assert.equal(await page.locator(".sv-root").evaluate((root) => root.classList.contains("sv-busy")), false);
      }
      assert.equal(await markup(replay), await markup(live));
    });
  }
});
