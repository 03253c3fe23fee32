// decimalText (common/decimal-text.ts) writes what String(n) writes, for the
// numbers an SSE stream gives its events: the table is every place where a
// group of three digits begins, ends or carries, and the sweep checks the
// numbers around each.
import assert from "node:assert/strict";
import { test } from "node:test";
import { decimalText } from "../../common/decimal-text.ts";

const TABLE: ReadonlyArray<[number, string]> = [
  [0, "0"],
  [7, "7"],
  [10, "10"],
  [999, "999"],
  [1000, "1000"],
  [1001, "1001"],
  [1010, "1010"],
  [1100, "1100"],
  [9999, "9999"],
  [100_000, "100000"],
  [1_000_000, "1000000"],
  [1_000_007, "1000007"],
  [12_003_040, "12003040"],
  [999_999_999, "999999999"],
  [1_000_000_000, "1000000000"],
  [Number.MAX_SAFE_INTEGER, "9007199254740991"],
];

test("decimalText: the text String(n) gives, where groups of three digits begin, end and carry", () => {
  for (const [n, text] of TABLE) assert.equal(decimalText(n), text, `decimalText(${n})`);
});

test("decimalText: every number up to 2,100,000 and around each power of ten up to 10^15 reads as String(n)", () => {
  for (let n = 0; n <= 2_100_000; n++) if (decimalText(n) !== String(n)) assert.fail(`decimalText(${n}) is ${decimalText(n)}`);
  for (let power = 1; power <= 1e15; power *= 10) {
    for (let n = Math.max(0, power - 1001); n <= power + 1001; n++) if (decimalText(n) !== String(n)) assert.fail(`decimalText(${n}) is ${decimalText(n)}`);
  }
});
