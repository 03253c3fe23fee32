// A `stream: true` client that stops reading must cost its own response only:
// the chunks waiting for it are bounded, and past the bound it is cut off,
// which aborts its completion and frees the backend slot. Real HTTP/1.1
// clients on raw sockets that read the headers and then never read again,
// the fixture agent flooding more than the kernel's socket buffers hold.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { pollDeferred, startV1, TOKEN, type V1Harness } from "./harness.ts";

/** 1500 chunks of 8 KiB: far more than the loopback socket buffers (a few MiB) and the queue bound below. */
const FLOOD = "flood 1500 8192";

/** Sends a stream:true request on a raw socket, waits for the response headers, then stops reading. */
async function stalledStream(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const body = JSON.stringify({ model: "fixture", messages: [{ role: "user", content: FLOOD }], stream: true });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await new Promise<void>((resolve, reject) => {
    let head = "";
    const onData = (data: Buffer): void => {
      head += data.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      // From here on nothing is read: the socket's buffers fill and the server's writes stall.
      socket.pause();
      assert.match(head, /^HTTP\/1\.1 200/);
      resolve();
    };
    socket.on("data", onData);
    socket.once("error", reject);
  });
  return socket;
}

describe("a stalled stream:true reader", () => {
  let v1: V1Harness;
  const sockets: Socket[] = [];
  before(async () => {
    v1 = await startV1({ limits: { concurrencyPerBackend: 2, streamMaxQueuedBytes: 256 * 1024 } });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await v1.close();
  });

  it("regression: a stalled stream:true reader no longer pins a backend slot; a deferred completion on the same agent still finishes", { timeout: 60_000 }, async () => {
    // Two stalled readers take both slots of the agent.
    sockets.push(await stalledStream(v1.url), await stalledStream(v1.url));
    const client = v1.client();
    const { request_id } = (await client.post("/chat/completions", {
      body: { model: "fixture", messages: [{ role: "user", content: "echo deferred done" }], deferred: true },
    })) as { request_id: string };
    const plain = await client.chat.completions.create({ model: "fixture", messages: [{ role: "user", content: "echo plain done" }] });
    assert.equal(plain.choices[0]?.message.content, "plain done");
    const deferred = await pollDeferred(client, request_id);
    assert.equal(deferred.status, 200);
    assert.equal((deferred.body as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "deferred done");
  });
});
