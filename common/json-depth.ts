// How deep a JSON value nests, bounded at every door a message comes in by.
// JSON.parse has no depth limit, but JSON.stringify, structured clones and any
// recursive walk run on the call stack: a 5,000-deep array (10 KB of text)
// overflows it. Such a value, let in, fails where the message is next
// serialized (a journal write, a relay to another peer), far from its sender
// and possibly inside a timer, where the failure ends the process. So a
// message that nests deeper than the bound is refused where it is read, with
// the error of the protocol it came by.
//
// Two checks, for two kinds of door (figures: Node 24, one core):
// - `jsonTextDeeperThan` scans the text before it is parsed, jumping over
//   strings with indexOf. It stops at the first level too many, so a hostile
//   body costs a few microseconds instead of its parse (a 2 MB body of
//   brackets takes 120 ms to parse, a 16 MiB one 3.5 s and 450 MB). Used for
//   request bodies and WebSocket messages from clients.
// - `jsonValueDeeperThan` walks a parsed value, recursing at most to the bound.
//   On an agent's typical `session/update` line (480 characters) it costs
//   80 ns against 300 ns for the scan and 1 µs for the parse, so it is the
//   check of the hot path: agents' lines, relayed by the hundred thousand a
//   second, and the editor's control messages, which its library parses.

/**
 * Levels of arrays and objects an inbound message may nest, the message
 * object itself counting one. An ACP message nests 5 to 20 levels (a tool
 * call's `rawInput`, the model's own JSON, sits at level 4 or 5), so 128 leaves
 * such input over a hundred levels; JSON.stringify overflows past 4,000 or so,
 * less when called deep in a stack, so 128 stays far from it; in levels.
 */
export const DEFAULT_MAX_JSON_DEPTH = 128;

/** Characters of JSON text below which no value can be deeper than `maxDepth`: each level takes an opening and a closing bracket. */
export function minCharsDeeperThan(maxDepth: number): number {
  return 2 * (maxDepth + 1);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Index of the quote that ends the string whose text starts at `from` (the text's length when none does). */
function endOfString(text: string, from: number): number {
  for (let at = from; ; ) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    // Escaped when an odd number of backslashes precede it.
    let backslash = quote - 1;
    while (backslash >= from && text.charCodeAt(backslash) === BACKSLASH) backslash--;
    if ((quote - 1 - backslash) % 2 === 0) return quote;
    at = quote + 1;
  }
}

/**
 * True when the JSON text nests arrays and objects more than `maxDepth` deep
 * (the outermost counts one; brackets inside strings do not count). Exact for
 * valid JSON; for text that is not, it answers something and JSON.parse then
 * refuses the text anyway.
 */
export function jsonTextDeeperThan(text: string, maxDepth: number): boolean {
  if (text.length < minCharsDeeperThan(maxDepth)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = endOfString(text, i + 1);
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}

/**
 * True when a parsed JSON value nests arrays and objects more than `maxDepth`
 * deep (the outermost counts one). Recurses at most `maxDepth` + 1 frames, so
 * the check itself cannot overflow the stack.
 */
export function jsonValueDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (maxDepth <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (jsonValueDeeperThan(value[i], maxDepth - 1)) return true;
    return false;
  }
  for (const key in value) if (jsonValueDeeperThan((value as Record<string, unknown>)[key], maxDepth - 1)) return true;
  return false;
}

/** The reason a message is refused, as its error message says it. */
export function tooDeepReason(maxDepth: number): string {
  return `the message nests arrays and objects deeper than ${maxDepth} levels`;
}
