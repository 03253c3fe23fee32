// An agent's text chunks read through a learned line template
// (common/line-templates.ts) are exactly what a full parse gives, and every
// line that is not such a chunk (spaced, reordered, with a field of its own,
// a string that is no valid JSON string, too deep, not JSON at all) is parsed
// and checked as before. The reader over a real PassThrough, with and without
// templates, fed the same lines.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { Message } from "vscode-jsonrpc/node";
import { LineTemplates } from "../../common/line-templates.ts";
import { NdjsonMessageReader, lineReadFor } from "../../common/ndjson.ts";

const UPDATE = "session/update";
const TEXT_FIELD = ["params", "update", "content", "text"];

const chunk = (sessionId: string, text: string, kind = "agent_message_chunk"): string =>
  JSON.stringify({ jsonrpc: "2.0", method: UPDATE, params: { sessionId, update: { sessionUpdate: kind, content: { type: "text", text } } } });

/** What a reader keeping session/update lines, with or without templates, makes of `lines`. */
async function read(lines: string[], templates: boolean): Promise<{ messages: Message[]; errors: string[]; kept: Array<string | undefined> }> {
  const input = new PassThrough();
  const reader = new NdjsonMessageReader(input, { keepLines: new Set([UPDATE]), ...(templates ? { templateField: TEXT_FIELD } : {}) });
  const messages: Message[] = [];
  const errors: string[] = [];
  reader.onError((error) => errors.push(error.message));
  reader.listen((message) => messages.push(message));
  for (const line of lines) {
    input.write(`${line}\n`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { messages, errors, kept: messages.map((m) => lineReadFor(m)) };
}

/** `read(lines, true)`, and how many of the lines a learned template read (a full parse read the others). */
async function readTemplated(lines: string[]): Promise<Awaited<ReturnType<typeof read>> & { matched: number }> {
  const match = LineTemplates.prototype.match;
  let matched = 0;
  LineTemplates.prototype.match = function (this: LineTemplates, line: string) {
    const value = match.call(this, line);
    if (value !== undefined) matched++;
    return value;
  };
  const templated = await read(lines, true).finally(() => (LineTemplates.prototype.match = match));
  return { ...templated, matched };
}

/** Texts a chunk may carry, and contents that are no valid JSON string or would change the message's shape if taken as text. */
const TEXTS = ["plain", "", "x".repeat(5_000), 'a "quoted" word', "back\\slash", "line\nbreak\ttab", "\u0000\u0001 control", "é ünïcödé 🙂 \u2028\u2029", "\ud800 lone", '","extra":"field', "ends with \\"];

describe("line templates", () => {
  it("a chunk of a learned shape reads as a full parse does: the same value, the same kept line", async () => {
    const lines = [chunk("s1", "first"), ...TEXTS.map((t) => chunk("s1", t)), chunk("s2", "other session"), chunk("s1", "thought", "agent_thought_chunk"), ...TEXTS.map((t) => chunk("s2", t))];
    const plain = await read(lines, false);
    // The template, not a full parse, read every chunk after the first of each shape.
    const { matched, ...templated } = await readTemplated(lines);
    assert.equal(matched, 2 * TEXTS.length, "the chunks after the first of each session and kind");
    assert.deepEqual(templated.messages, plain.messages);
    assert.deepEqual(templated.kept, plain.kept);
    assert.deepEqual(templated.kept, lines, "each kept line is the agent's own");
    assert.deepEqual(templated.errors, []);
  });

  it("twenty sessions streaming at once, their chunks interleaved, are each read through their own template", async () => {
    const lines = Array.from({ length: 400 }, (_, i) => chunk(`session-${i % 20}`, `chunk ${i}`));
    const plain = await read(lines, false);
    const { matched, ...templated } = await readTemplated(lines);
    assert.deepEqual(templated.messages, plain.messages);
    assert.equal(matched, 400 - 20, "all but each session's first chunk");
  });

  it("lines around a learned prefix and suffix that are not one JSON string there are parsed whole: refused, or read with all they hold", async () => {
    const prefix = chunk("s1", "").slice(0, -'"}}}}'.length);
    const lines = [
      chunk("s1", "teaches the shape"),
      // A quote ends the string early: the line has a field of its own.
      `${prefix}x","extra":"y"}}}}`,
      `${prefix}x","annotations":{"a":[[[[1]]]]},"y":"z"}}}}`,
      // Not JSON: an unescaped quote, a raw control character, a backslash that escapes the closing quote, a bad escape.
      `${prefix}a"b"}}}}`,
      `${prefix}raw\u0001control"}}}}`,
      `${prefix}ends\\"}}}}`,
      `${prefix}bad \\x escape"}}}}`,
      // Spaced, reordered, another key beside them: a full parse each.
      chunk("s1", "spaced").replace(/,/g, ", "),
      JSON.stringify({ method: UPDATE, jsonrpc: "2.0", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "reordered" } } } }),
      JSON.stringify({ jsonrpc: "2.0", method: UPDATE, params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "with id" } } }, id: 7 }),
      chunk("s1", "after them all"),
    ];
    const plain = await read(lines, false);
    const templated = await read(lines, true);
    assert.deepEqual(templated.messages, plain.messages);
    assert.deepEqual(templated.kept, plain.kept);
    assert.deepEqual(templated.errors, plain.errors);
    assert.equal(plain.errors.length, 4, "the four lines that are not JSON are refused either way");
  });

  it("a line nested past the depth bound is refused the same way with templates", async () => {
    const prefix = chunk("s1", "").slice(0, -'"}}}}'.length);
    const deep = `${prefix}x","nested":${"[".repeat(200)}${"]".repeat(200)}}}}}`;
    const lines = [chunk("s1", "teaches the shape"), deep, chunk("s1", "next")];
    const plain = await read(lines, false);
    const templated = await read(lines, true);
    assert.deepEqual(templated.messages, plain.messages);
    assert.deepEqual(templated.errors, plain.errors);
    assert.ok(plain.errors.some((e) => e.includes("deep")), plain.errors.join("; "));
  });

  it("the shape is learned from a line written as JSON.stringify writes it, with nothing but the text varying beside plain values", () => {
    const templates = new LineTemplates(TEXT_FIELD);
    const line = chunk("s1", "one");
    templates.learn(line);
    assert.deepEqual(templates.match(chunk("s1", "two")), JSON.parse(chunk("s1", "two")));
    assert.equal(templates.match(chunk("s9", "two")), undefined, "another session is another shape");

    const withArray = JSON.stringify({ jsonrpc: "2.0", method: UPDATE, params: { sessionId: "s3", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a", annotations: { audience: ["user"] } } } } });
    const nested = new LineTemplates(TEXT_FIELD);
    nested.learn(withArray);
    assert.equal(nested.match(withArray.replace('"text":"a"', '"text":"b"')), undefined, "an object beside the path is not a template: it would be shared between messages");
  });
});
