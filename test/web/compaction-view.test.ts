// The session view in a browser draws a compacted history as it draws the
// history as it came (design: third wave, decision 4): for random histories
// (test/helpers/random-history.ts), one page is fed the updates as the
// journal got them, another their compaction (sidecar/hub/compaction.ts),
// and the transcript, the plan and the title must be the same markup. And
// the first page of a paged replay (sidecar/hub/history-pages.ts) draws the
// session's state (the plan, the header) as the whole replay does.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Page } from "playwright-core";
import { compactHistory } from "../../sidecar/hub/compaction.ts";
import { latestTurns } from "../../sidecar/hub/history-pages.ts";
import { randomHistory } from "../helpers/random-history.ts";
import { seeded } from "../helpers/seeded-random.ts";
import { SESSION_ID } from "./fixtures.ts";
import { feed, openViewPage, type ViewPage } from "./page.ts";

const CASES = 60;

/** What the view shows of the session (its transcript, plan and title), or only `parts` of it. */
function shown(page: Page, parts = ["sv-transcript", "sv-plan", "sv-title"]): Promise<string> {
  return page.evaluate((classes) => classes.map((c) => document.querySelector(`.${c}`)?.outerHTML ?? "").join("\n"), parts);
}

describe("the session view draws a compacted history as it draws the history as it came", () => {
  let vp: ViewPage;
  let live: Page;
  let compacted: Page;

  before(async () => {
    vp = await openViewPage();
    live = vp.page;
    compacted = await vp.open();
  });
  after(async () => {
    await vp?.close();
  });

  test(`${CASES} random histories: the same transcript, plan and title`, async () => {
    let fed = 0;
    let drawn = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const history = randomHistory(seeded(seed), { turns: 1 + (seed % 4), steps: 60, openEnd: true });
      const compact = compactHistory(history);
      const notify = (updates: SessionUpdate[]) => updates.map((update) => ({ sessionId: SESSION_ID, update }));
      await Promise.all([live.reload(), compacted.reload()]);
      await Promise.all([live.waitForFunction(() => "sv" in window), compacted.waitForFunction(() => "sv" in window)]);
      await feed(live, notify(history));
      await feed(compacted, notify(compact));
      const markup = await shown(live);
      assert.ok(markup.includes("sv-msg"), `seed ${seed}: the view drew the history`);
      assert.equal(await shown(compacted), markup, `seed ${seed}`);
      fed += history.length;
      drawn += compact.length;
    }
    assert.ok(drawn < fed * 0.8, `${drawn} updates drew what ${fed} did`);
  });

  test(`${CASES} random histories: the first page of a paged replay, the latest turn after the state the others left, draws the plan and the header as the whole replay`, async () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const history = compactHistory(randomHistory(seeded(1_000 + seed), { turns: 2 + (seed % 4), steps: 60, openEnd: true }));
      const notify = (updates: SessionUpdate[]) => updates.map((update) => ({ sessionId: SESSION_ID, update }));
      await Promise.all([live.reload(), compacted.reload()]);
      await Promise.all([live.waitForFunction(() => "sv" in window), compacted.waitForFunction(() => "sv" in window)]);
      await feed(live, notify(history));
      await feed(compacted, notify(latestTurns(history, 1).updates));
      const state = ["sv-plan", "sv-header"];
      assert.equal(await shown(compacted, state), await shown(live, state), `seed ${seed}`);
    }
  });
});
