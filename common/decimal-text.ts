// A count's decimal text without V8's number-to-string conversion. V8 keeps
// the text of each number it converts (`String(n)`, `${n}`) in a cache that
// survives young-generation collections: every SSE event id of a flood of
// 20,000 updates went with it into the old generation, two thirds of what a
// flood left there, and such growth is what brings a major collection into
// every third or fourth flood (docs/performance.md, "Event ids out of the
// old generation"). Texts made here from a table of three-digit groups die
// young with the event they are part of.

/** Numbers below this are one group; a longer number is cut into groups of three digits. */
const GROUP = 1000;
/** "0" to "999": a number's leading group. */
const LEADING = Array.from({ length: GROUP }, (_, i) => String(i));
/** "000" to "999": every group after the first. */
const PADDED = LEADING.map((text) => text.padStart(3, "0"));

/** The decimal text of `n`, a non-negative integer (as `String(n)` gives it, up to Number.MAX_SAFE_INTEGER). */
export function decimalText(n: number): string {
  if (n < GROUP) return LEADING[n]!;
  let text = PADDED[n % GROUP]!;
  let rest = Math.floor(n / GROUP);
  while (rest >= GROUP) {
    text = PADDED[rest % GROUP]! + text;
    rest = Math.floor(rest / GROUP);
  }
  return LEADING[rest]! + text;
}
