// What an SSE stream keeps of what it wrote, for a reader that resumes: one
// case a row, each naming the bound it shows.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReplayBudget } from "../../sidecar/acp/replay-budget.ts";
import { ReplayLog } from "../../sidecar/acp/replay-log.ts";

interface Row {
  row: string;
  replayEvents: number;
  replayChars: number;
  /** Written, in this order. */
  written: string[];
  /** What happens next, if anything. */
  then?: (log: ReplayLog) => void;
  /** What is kept at the end, oldest first. */
  kept: string[];
}

const ROWS: Row[] = [
  { row: "within both bounds, everything written is kept", replayEvents: 5, replayChars: 100, written: ["a", "bb", "ccc"], kept: ["a", "bb", "ccc"] },
  { row: "past replayEvents, the oldest are forgotten", replayEvents: 2, replayChars: 100, written: ["a", "bb", "ccc"], kept: ["bb", "ccc"] },
  { row: "past replayChars, the oldest are forgotten", replayEvents: 5, replayChars: 5, written: ["a", "bb", "ccc"], kept: ["bb", "ccc"] },
  { row: "a message longer than replayChars is not kept, nor what came before it", replayEvents: 5, replayChars: 3, written: ["a", "bbbb"], kept: [] },
  {
    row: "taking back the newest gives them oldest first, and they are no longer kept",
    replayEvents: 5,
    replayChars: 100,
    written: ["a", "bb", "ccc"],
    then: (log) => assert.deepEqual(log.takeBack(2), ["bb", "ccc"]),
    kept: ["a"],
  },
  { row: "taking back none changes nothing", replayEvents: 5, replayChars: 100, written: ["a"], then: (log) => assert.deepEqual(log.takeBack(0), []), kept: ["a"] },
  { row: "forgetOldest(chars) forgets the oldest until at most chars are kept", replayEvents: 5, replayChars: 100, written: ["a", "bb", "ccc"], then: (log) => log.forgetOldest(4), kept: ["ccc"] },
  { row: "clear forgets everything", replayEvents: 5, replayChars: 100, written: ["a", "bb"], then: (log) => log.clear(), kept: [] },
  {
    row: "over a long run the newest stay kept in order (the log is compacted)",
    replayEvents: 3,
    replayChars: 1 << 20,
    written: Array.from({ length: 5_000 }, (_, i) => String(i)),
    kept: ["4997", "4998", "4999"],
  },
];

describe("ReplayLog", () => {
  for (const { row, replayEvents, replayChars, written, then, kept } of ROWS) {
    it(row, () => {
      const budget = new ReplayBudget(1 << 30);
      const log = new ReplayLog({ replayEvents, replayChars, replayBudget: budget });
      for (const json of written) log.keep(json);
      then?.(log);
      const chars = kept.reduce((sum, json) => sum + json.length, 0);
      assert.equal(log.keptMessages, kept.length);
      assert.equal(log.keptChars, chars);
      assert.equal(budget.usedChars, chars, "the budget is told of every change");
      assert.deepEqual(log.takeBack(log.keptMessages), kept);
      assert.equal(budget.usedChars, 0);
    });
  }

  it("the server's budget forgets the oldest of the largest log first", () => {
    const budget = new ReplayBudget(10);
    const large = new ReplayLog({ replayEvents: 100, replayChars: 100, replayBudget: budget });
    const small = new ReplayLog({ replayEvents: 100, replayChars: 100, replayBudget: budget });
    for (const json of ["aaa", "bbb", "ccc"]) large.keep(json);
    small.keep("xx");
    large.keep("ddd");
    assert.ok(budget.usedChars <= 10, `${budget.usedChars} characters kept`);
    assert.equal(budget.usedChars, large.keptChars + small.keptChars);
    assert.equal(small.keptMessages, 1, "the small log keeps what it wrote");
    assert.deepEqual(large.takeBack(large.keptMessages).at(-1), "ddd", "the large log keeps its newest");
  });
});
