// How the Overview says when a paired device last used its token.
import assert from "node:assert/strict";
import { it } from "node:test";
import { lastUsedText } from "../../extension/pairing/last-used.ts";

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const MIN = 60_000;

it("last use | never, just now, minutes, hours, days (singular and plural)", () => {
  assert.equal(lastUsedText(undefined, NOW), "never used");
  assert.equal(lastUsedText(NOW - 59_000, NOW), "used just now");
  assert.equal(lastUsedText(NOW - 5 * MIN - 10_000, NOW), "used 5 min ago");
  assert.equal(lastUsedText(NOW - 59 * MIN, NOW), "used 59 min ago");
  assert.equal(lastUsedText(NOW - 3 * 60 * MIN, NOW), "used 3 h ago");
  assert.equal(lastUsedText(NOW - 24 * 60 * MIN, NOW), "used 1 day ago");
  assert.equal(lastUsedText(NOW - 3 * 24 * 60 * MIN, NOW), "used 3 days ago");
});

it("last use | a clock that moved back reads as just now, never as a negative time", () => {
  assert.equal(lastUsedText(NOW + 5 * MIN, NOW), "used just now");
});
