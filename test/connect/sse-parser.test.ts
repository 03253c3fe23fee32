// The client's SSE reader against the event-stream grammar (design: decision 6
// — data lines carry the message, comment lines are keep-alives). One row per
// rule; each row is also fed one byte at a time, so no rule depends on where
// the network happens to cut the stream.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SseParser } from "../../client/sse.ts";
import { ClientTransportError } from "../../client/transport.ts";

function parseWhole(text: string, max = 1024): string[] {
  const events: string[] = [];
  new SseParser(max).push(Buffer.from(text, "utf8"), (e) => events.push(e));
  return events;
}

function parseBytewise(text: string, max = 1024): string[] {
  const parser = new SseParser(max);
  const bytes = Buffer.from(text, "utf8");
  const events: string[] = [];
  for (let i = 0; i < bytes.length; i++) parser.push(bytes.subarray(i, i + 1), (e) => events.push(e));
  return events;
}

const rows: Array<[string, string, string[]]> = [
  ["one data line, LF", 'data: {"a":1}\n\n', ['{"a":1}']],
  ["CRLF line ends", 'data: {"a":1}\r\n\r\n', ['{"a":1}']],
  ["bare CR line ends", 'data: {"a":1}\r\r', ['{"a":1}']],
  ["no space after the colon", 'data:{"a":1}\n\n', ['{"a":1}']],
  ["several data lines join with LF", "data: one\ndata: two\n\n", ["one\ntwo"]],
  ["a comment line is a keep-alive, not an event", ":\n\n: keep-alive\n\n", []],
  ["comments between data lines are skipped", "data: a\n: ping\ndata: b\n\n", ["a\nb"]],
  ["event, id and retry fields are read past", "event: message\nid: 7\nretry: 100\ndata: x\n\n", ["x"]],
  ["an event without data is no event", "event: message\n\n", []],
  ["an unfinished event is not delivered", "data: half", []],
  ["two events in one chunk", "data: 1\n\ndata: 2\n\n", ["1", "2"]],
  ["a byte order mark at the start is dropped", '\uFEFFdata: {"a":1}\n\n', ['{"a":1}']],
  ["multi-byte characters survive any cut", "data: héllo ✓ 🙂\n\n", ["héllo ✓ 🙂"]],
];

describe("SSE parser", () => {
  for (const [name, input, expected] of rows) {
    test(`${name} (whole)`, () => assert.deepEqual(parseWhole(input), expected));
    test(`${name} (byte by byte)`, () => assert.deepEqual(parseBytewise(input), expected));
  }

  test("ids go with their events: an id-only event (an empty data line) hands over its id, byte by byte too", () => {
    const text = "id: t-0\ndata:\n\nid: t-1\r\ndata: one\r\n\r\ndata: two\n\nid: t-3\n\n";
    for (const split of [text.length, 1]) {
      const parser = new SseParser(1024);
      const events: Array<[string, string | undefined]> = [];
      const bytes = Buffer.from(text, "utf8");
      for (let i = 0; i < bytes.length; i += split) parser.push(bytes.subarray(i, i + split), (data, id) => events.push([data, id]));
      assert.deepEqual(events, [["", "t-0"], ["one", "t-1"], ["two", undefined]]);
    }
  });

  test("an event larger than the bound is refused, not buffered", () => {
    assert.throws(() => parseWhole(`data: ${"x".repeat(200)}\n\n`, 100), (e: unknown) => e instanceof ClientTransportError && /exceeds 100 bytes/.test(e.message));
  });

  test("events before an oversized one in the same chunk are still delivered", () => {
    const events: string[] = [];
    assert.throws(() => new SseParser(100).push(Buffer.from(`data: a\n\ndata: ${"x".repeat(200)}\n\n`), (e) => events.push(e)), /exceeds/);
    assert.deepEqual(events, ["a"]);
  });

  test("a line that never ends is refused once it passes the bound", () => {
    const parser = new SseParser(100);
    assert.throws(() => {
      for (let i = 0; i < 20; i++) parser.push(Buffer.from("xxxxxxxxxx"), () => {});
    }, /exceeds 100 bytes/);
  });
});
