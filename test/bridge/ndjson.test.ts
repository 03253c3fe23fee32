// Newline-delimited JSON framing: the reader over a real PassThrough stream fed
// chunk by chunk, the writer over a stream whose buffer fills, and the pair
// under a vscode-jsonrpc connection.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { createMessageConnection, type Message } from "vscode-jsonrpc/node";
import { NdjsonLineError, NdjsonMessageReader, NdjsonMessageWriter } from "../../common/ndjson.ts";

interface Read {
  messages: Message[];
  errors: Error[];
  closed: boolean;
}

/** Feeds the chunks one by one (a tick apart) into a reader and collects what it reports. */
async function read(chunks: (string | Buffer)[], maxLineBytes?: number): Promise<Read> {
  const input = new PassThrough();
  const reader = new NdjsonMessageReader(input, maxLineBytes === undefined ? {} : { maxLineBytes });
  const result: Read = { messages: [], errors: [], closed: false };
  reader.onError((error) => result.errors.push(error));
  const closed = new Promise<void>((resolve) =>
    reader.onClose(() => {
      result.closed = true;
      resolve();
    }),
  );
  reader.listen((message) => result.messages.push(message));
  for (const chunk of chunks) {
    input.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  input.end();
  await closed;
  return result;
}

const ids = (r: Read): unknown[] => r.messages.map((m) => (m as unknown as { id: unknown }).id);
const msg = (id: number, text = "hi"): string => JSON.stringify({ jsonrpc: "2.0", id, method: "echo", params: { text } });

describe("NdjsonMessageReader", () => {
  test("one message per line", async () => {
    const r = await read([`${msg(1)}\n${msg(2)}\n`]);
    assert.deepEqual(ids(r), [1, 2]);
    assert.deepEqual(r.errors, []);
    assert.equal(r.closed, true);
  });

  test("a message split across chunks is joined", async () => {
    const line = `${msg(1)}\n`;
    const r = await read([line.slice(0, 5), line.slice(5, 20), line.slice(20)]);
    assert.deepEqual(r.messages, [JSON.parse(msg(1))]);
  });

  test("a multi-byte UTF-8 character split across chunks is decoded whole", async () => {
    const bytes = Buffer.from(`${msg(1, "héllo 😀 wörld")}\n`, "utf8");
    const emoji = bytes.indexOf(Buffer.from("😀", "utf8"));
    const r = await read([bytes.subarray(0, emoji + 1), bytes.subarray(emoji + 1, emoji + 3), bytes.subarray(emoji + 3)]);
    assert.deepEqual(r.messages, [JSON.parse(msg(1, "héllo 😀 wörld"))]);
    assert.deepEqual(r.errors, []);
  });

  test("CRLF line ends and blank lines are accepted", async () => {
    const r = await read([`${msg(1)}\r\n\n\r\n${msg(2)}\n`]);
    assert.deepEqual(ids(r), [1, 2]);
    assert.deepEqual(r.errors, []);
  });

  test("an over-long line is reported and skipped; the next line is read", async () => {
    const long = msg(1, "x".repeat(200));
    const r = await read([long.slice(0, 100), long.slice(100), `\n${msg(2)}\n`], 64);
    assert.deepEqual(ids(r), [2]);
    assert.equal(r.errors.length, 1);
    assert.ok(r.errors[0] instanceof NdjsonLineError);
    assert.equal((r.errors[0] as NdjsonLineError).reason, "too-long");
    assert.match(r.errors[0]!.message, /longer than 64 bytes/);
  });

  test("a line of exactly the limit is read", async () => {
    const line = msg(1);
    const r = await read([`${line}\n`], Buffer.byteLength(line));
    assert.equal(r.messages.length, 1);
  });

  test("a line that is not JSON is reported and skipped", async () => {
    const r = await read([`not json\n${msg(2)}\n`]);
    assert.deepEqual(ids(r), [2]);
    assert.equal((r.errors[0] as NdjsonLineError).reason, "not-json");
    assert.match(r.errors[0]!.message, /not JSON: "not json"/);
  });

  test("JSON that is not an object (a batch, a number) is reported and skipped", async () => {
    const r = await read([`[${msg(1)}]\n42\n${msg(3)}\n`]);
    assert.deepEqual(ids(r), [3]);
    assert.equal(r.errors.length, 2);
  });

  test("a chunk that ends one line, holds whole ones and begins the next: each once, in order", async () => {
    const lines = [1, 2, 3, 4, 5].map((id) => `${msg(id, `ünï ${id} 😀`)}\n`).join("");
    const bytes = Buffer.from(lines, "utf8");
    // Cut inside the first line and inside the last (through an emoji's bytes).
    const cutA = 10;
    const cutB = bytes.lastIndexOf(Buffer.from("😀", "utf8")) + 2;
    const r = await read([bytes.subarray(0, cutA), bytes.subarray(cutA, cutB), bytes.subarray(cutB)]);
    assert.deepEqual(ids(r), [1, 2, 3, 4, 5]);
    assert.deepEqual(r.messages[4], JSON.parse(msg(5, "ünï 5 😀")));
    assert.deepEqual(r.errors, []);
  });

  test("an over-long line among short ones in one chunk is skipped; the others are read", async () => {
    const r = await read([`${msg(1)}\n${msg(2, "x".repeat(200))}\n${msg(3)}\n`], 100);
    assert.deepEqual(ids(r), [1, 3]);
    assert.equal((r.errors[0] as NdjsonLineError).reason, "too-long");
  });

  test("the rest of an over-long line is thrown away up to its newline; what follows in that chunk is read", async () => {
    const long = msg(1, "x".repeat(300));
    const r = await read([long.slice(0, 150), `${long.slice(150)}\n${msg(2)}\r\n${msg(3)}\n`], 100);
    assert.deepEqual(ids(r), [2, 3]);
    assert.equal(r.errors.length, 1);
  });

  test("one read per event-loop turn: a read that arrives in the same turn waits for the next (backpressure on a fast writer)", async () => {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input);
    const got: Message[] = [];
    reader.listen((message) => got.push(message));
    input.write(`${msg(1)}\n`);
    input.write(`${msg(2)}\n`);
    assert.deepEqual(ids({ messages: got, errors: [], closed: false }), [1], "the second read waits");
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ids({ messages: got, errors: [], closed: false }), [1, 2]);
  });

  test("a reader disposed while paused for the turn leaves the stream paused (nothing flows to nobody)", async () => {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input);
    const listening = reader.listen(() => undefined);
    input.write(`${msg(1)}\n`);
    listening.dispose();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(input.isPaused(), true);
  });

  test("a last line without a newline is not delivered (the stream ended mid-message)", async () => {
    const r = await read([`${msg(1)}\n${msg(2)}`]);
    assert.deepEqual(ids(r), [1]);
  });
});

/** A writable that accepts nothing until `release()`: every write waits for drain. */
class SlowSink extends Writable {
  readonly lines: string[] = [];
  private pending: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 16 });
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(chunk.toString("utf8"));
    this.pending.push(callback);
  }
  release(): void {
    const pending = this.pending;
    this.pending = [];
    for (const callback of pending) callback();
  }
}

describe("NdjsonMessageWriter", () => {
  test("writes one JSON line per message, in order", async () => {
    const out = new PassThrough();
    const writer = new NdjsonMessageWriter(out);
    await writer.write({ jsonrpc: "2.0", id: 1, method: "a" } as Message);
    await writer.write({ jsonrpc: "2.0", id: 2, method: "b", params: { s: "é\n" } } as Message);
    writer.end();
    let text = "";
    for await (const chunk of out) text += chunk;
    assert.equal(text, `{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b","params":{"s":"é\\n"}}\n`);
  });

  test("with nothing waiting, a message is written in the caller's turn, not a microtask later", () => {
    const out = new PassThrough();
    const writer = new NdjsonMessageWriter(out);
    void writer.write({ jsonrpc: "2.0", id: 1, method: "a" } as Message);
    void writer.write({ jsonrpc: "2.0", id: 2, method: "b" } as Message);
    assert.equal(String(out.read()), `{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n`);
  });

  test("a message that cannot be serialized fails alone; the next one is written", async () => {
    const out = new PassThrough();
    const writer = new NdjsonMessageWriter(out);
    const errors: Error[] = [];
    writer.onError(([error]) => errors.push(error));
    const circular: Record<string, unknown> = {};
    circular["self"] = circular;
    await assert.rejects(writer.write({ jsonrpc: "2.0", method: "a", params: circular } as Message), /circular/i);
    await writer.write({ jsonrpc: "2.0", id: 2, method: "b" } as Message);
    assert.equal(String(out.read()), `{"jsonrpc":"2.0","id":2,"method":"b"}\n`);
    assert.equal(errors.length, 1);
  });

  test("waits for drain when the stream's buffer is full, and writes one message at a time", async () => {
    const sink = new SlowSink();
    const writer = new NdjsonMessageWriter(sink);
    let firstDone = false;
    let secondDone = false;
    const first = writer.write({ jsonrpc: "2.0", id: 1, method: "a-long-method-name" } as Message).then(() => (firstDone = true));
    const second = writer.write({ jsonrpc: "2.0", id: 2, method: "b" } as Message).then(() => (secondDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    // The first line overflows the 16-byte buffer: it is not done until drain, and the second waits behind it.
    assert.equal(firstDone, false);
    assert.equal(secondDone, false);
    assert.equal(sink.lines.length, 1);
    sink.release();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    sink.release();
    await second;
    assert.deepEqual(sink.lines.map((l) => JSON.parse(l).id), [1, 2]);
  });

  test("a write to a closed stream fails and reports the error", async () => {
    const out = new PassThrough();
    const writer = new NdjsonMessageWriter(out);
    const errors: Error[] = [];
    writer.onError(([error]) => errors.push(error));
    out.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(writer.write({ jsonrpc: "2.0", id: 1, method: "a" } as Message), /closed/);
    assert.ok(errors.length >= 1);
  });
});

describe("the pair under vscode-jsonrpc", () => {
  test("a request and its response travel through two connections linked by pipes", async () => {
    const aToB = new PassThrough();
    const bToA = new PassThrough();
    const a = createMessageConnection(new NdjsonMessageReader(bToA), new NdjsonMessageWriter(aToB));
    const b = createMessageConnection(new NdjsonMessageReader(aToB), new NdjsonMessageWriter(bToA));
    b.onRequest("add", (params: { x: number; y: number }) => params.x + params.y);
    a.listen();
    b.listen();
    assert.equal(await a.sendRequest("add", { x: 2, y: 40 }), 42);
    a.dispose();
    b.dispose();
  });
});

describe("batched notifications", () => {
  const batch = { method: "$/batch", of: new Set(["session/update"]) };
  const line = (m: object): string => `${JSON.stringify(m)}\n`;
  const update = (n: number) => ({ jsonrpc: "2.0", method: "session/update", params: { n } });

  test("consecutive updates of one read arrive as one batch, in order; other messages break the run", () => {
    const stream = new PassThrough();
    const reader = new NdjsonMessageReader(stream, { batchNotifications: batch });
    const got: unknown[] = [];
    reader.listen((m) => got.push(m));
    const cancel = { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } };
    const response = { jsonrpc: "2.0", id: 7, result: {} };
    stream.write(line(update(1)) + line(update(2)) + line(cancel) + line(update(3)) + line(response) + line(update(4)) + line(update(5)));
    assert.deepEqual(got, [
      { jsonrpc: "2.0", method: "$/batch", params: { messages: [update(1), update(2)] } },
      cancel,
      update(3),
      response,
      { jsonrpc: "2.0", method: "$/batch", params: { messages: [update(4), update(5)] } },
    ]);
  });

  test("without the option, every message arrives alone", () => {
    const stream = new PassThrough();
    const reader = new NdjsonMessageReader(stream);
    const got: unknown[] = [];
    reader.listen((m) => got.push(m));
    stream.write(line(update(1)) + line(update(2)));
    assert.deepEqual(got, [update(1), update(2)]);
  });
});
