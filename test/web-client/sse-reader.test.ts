// The web client's event-stream reader, over a real fetch body from a real
// server: line ends of every kind, split anywhere between chunks, and a bound
// on what a stream may make the page buffer.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { readEvents, SseEventTooLarge, SseReader } from "../../web/client/sse.ts";

function read(chunks: string[], maxChars?: number): string[] {
  const events: string[] = [];
  const reader = new SseReader((data) => events.push(data), maxChars);
  for (const chunk of chunks) reader.push(chunk);
  return events;
}

describe("web client SSE reader", () => {
  it("a CRLF split between two chunks ends one line, not two: a two-line event stays one event", () => {
    assert.deepEqual(read(["data: a\r", "\ndata: b\r\n\r\n"]), ["a\nb"]);
  });

  it("every split point of a CRLF stream gives the same events", () => {
    const stream = 'data: {"a":1}\r\n\r\n: keep-alive\r\n\r\ndata: x\r\ndata: y\r\n\r\n';
    for (let i = 0; i <= stream.length; i++) {
      assert.deepEqual(read([stream.slice(0, i), stream.slice(i)]), ['{"a":1}', "x\ny"], `split at ${i}`);
    }
  });

  it("bare CR and LF line ends are read as the grammar says", () => {
    assert.deepEqual(read(["data: a\r\rdata: b\n\n"]), ["a", "b"]);
  });

  it("a line that never ends is refused at the bound, not buffered without limit", () => {
    const reader = new SseReader(() => {}, 1_000);
    assert.throws(() => {
      for (let i = 0; i < 100; i++) reader.push("x".repeat(100));
    }, SseEventTooLarge);
  });

  it("an event of many data lines is refused at the bound", () => {
    assert.throws(() => read(Array.from({ length: 100 }, () => `data: ${"y".repeat(50)}\n`), 1_000), SseEventTooLarge);
  });

  describe("over a fetch body", () => {
    let server: Server;
    let url: string;
    before(async () => {
      server = createServer((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        if (req.url === "/endless") {
          // One line that never ends: the reader must give up, and the stream with it.
          const timer = setInterval(() => res.write("z".repeat(64 * 1024)), 1);
          res.on("close", () => clearInterval(timer));
          return;
        }
        res.write("data: one\r");
        setImmediate(() => res.end("\ndata: more\r\n\r\ndata: two\r\n\r\n"));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server.closeAllConnections();
      server.close();
    });

    it("events whose CRLF arrives in two writes are delivered whole", async () => {
      const events: string[] = [];
      const res = await fetch(`${url}/split`);
      await readEvents(res.body!, (data) => events.push(data));
      assert.deepEqual(events, ["one\nmore", "two"]);
    });

    it("an endless line rejects with the bound and the stream is let go", async () => {
      const res = await fetch(`${url}/endless`);
      await assert.rejects(readEvents(res.body!, () => {}), SseEventTooLarge);
    });
  });
});
