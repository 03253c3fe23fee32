// The two depth checks of common/json-depth.ts: the scan of JSON text (doors
// that have the text: /acp, /v1) and the walk of a parsed value (agents'
// lines, the control protocol). Both hold the bound exactly, and the scan
// agrees with the parse on generated values whose strings are full of
// brackets, quotes and backslashes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_MAX_JSON_DEPTH, jsonTextDeeperThan, jsonValueDeeperThan } from "../../common/json-depth.ts";

const arrays = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
const objects = (depth: number): string => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);

/** The depth of a parsed value, without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    deepest = Math.max(deepest, d);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

/** A small deterministic generator (mulberry32), so a failure is repeatable. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = ['"', "\\", "[", "]", "{", "}", "\\\"", "\\[", "a", "é", "\n", "😀"];

function generate(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth <= 1 || pick < 0.2) {
    let s = "";
    for (let i = Math.floor(next() * 6); i > 0; i--) s += TRICKY[Math.floor(next() * TRICKY.length)];
    return next() < 0.8 ? s : Math.floor(next() * 100);
  }
  const n = 1 + Math.floor(next() * 3);
  if (pick < 0.6) return Array.from({ length: n }, () => generate(next, depth - 1));
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${TRICKY[Math.floor(next() * TRICKY.length)]}${i}`, generate(next, depth - 1)]));
}

describe("jsonTextDeeperThan", () => {
  test("holds the bound exactly, for arrays and for objects", () => {
    for (const make of [arrays, objects]) {
      assert.equal(jsonTextDeeperThan(make(DEFAULT_MAX_JSON_DEPTH), DEFAULT_MAX_JSON_DEPTH), false);
      assert.equal(jsonTextDeeperThan(make(DEFAULT_MAX_JSON_DEPTH + 1), DEFAULT_MAX_JSON_DEPTH), true);
    }
  });

  test("brackets inside strings do not count, whatever the escapes before a quote", () => {
    const inString = JSON.stringify({ text: arrays(1_000) });
    assert.equal(jsonTextDeeperThan(inString, DEFAULT_MAX_JSON_DEPTH), false);
    // An escaped quote does not end the string; an escaped backslash before a quote does.
    assert.equal(jsonTextDeeperThan(`["\\"${"[".repeat(300)}"]`, DEFAULT_MAX_JSON_DEPTH), false);
    assert.equal(jsonTextDeeperThan(`["\\\\", ${arrays(200)}]`, DEFAULT_MAX_JSON_DEPTH), true);
  });

  test("agrees with the parsed value's depth on 2,000 generated values full of brackets, quotes and backslashes", () => {
    const next = random(0x5eed);
    for (let i = 0; i < 2_000; i++) {
      const value = generate(next, 1 + Math.floor(next() * 12));
      const text = JSON.stringify(value, null, next() < 0.3 ? 1 : undefined);
      const depth = depthOf(value);
      for (const bound of [depth - 1, depth]) {
        if (bound < 1) continue;
        assert.equal(jsonTextDeeperThan(text, bound), depth > bound, `bound ${bound}: ${text}`);
        assert.equal(jsonValueDeeperThan(value, bound), depth > bound, `bound ${bound}: ${text}`);
      }
    }
  });
});

describe("jsonValueDeeperThan", () => {
  test("holds the bound exactly, and walks a value 100,000 deep without overflowing the stack", () => {
    for (const make of [arrays, objects]) {
      assert.equal(jsonValueDeeperThan(JSON.parse(make(DEFAULT_MAX_JSON_DEPTH)), DEFAULT_MAX_JSON_DEPTH), false);
      assert.equal(jsonValueDeeperThan(JSON.parse(make(DEFAULT_MAX_JSON_DEPTH + 1)), DEFAULT_MAX_JSON_DEPTH), true);
    }
    assert.equal(jsonValueDeeperThan(JSON.parse(arrays(100_000)), DEFAULT_MAX_JSON_DEPTH), true);
    assert.equal(jsonValueDeeperThan("a string", 0), false);
  });
});
