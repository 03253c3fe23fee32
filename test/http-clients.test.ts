// The transport tests' HTTP clients (test/helpers/http-clients.ts) against a
// server that accepts connections and never says a word: a request fails at
// its deadline and says what it waited for, and closing an HTTP/2 client
// ends its connection even though the server never closes it. A server that
// loses an answer then costs the test its deadline, with a message, instead of
// the test's whole timeout and a file that never ends.
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { createClient, DEFAULT_CLOSE_GRACE_MS, ResponseTimeoutError } from "./helpers/http-clients.ts";
import type { HttpProtocol } from "./helpers/http-clients.ts";

/** A deadline short enough for a quick row, in milliseconds. */
const DEADLINE_MS = 300;

describe("the test HTTP clients against a server that never answers", () => {
  let mute: net.Server;
  const sockets = new Set<net.Socket>();
  let url: string;

  before(async () => {
    // Reads whatever comes and never writes or closes, not even its side when the client ends its own.
    mute = net.createServer({ allowHalfOpen: true }, (socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.resume();
    });
    mute.listen(0, "127.0.0.1");
    await once(mute, "listening");
    url = `http://127.0.0.1:${(mute.address() as net.AddressInfo).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    mute.close();
    await once(mute, "close");
  });

  for (const protocol of ["h2c", "http1", "undici-h2c"] satisfies HttpProtocol[]) {
    it(`${protocol}: a request with no answer fails at its deadline, naming the request and what it waited for`, async () => {
      const client = createClient(protocol, url);
      try {
        const failure = await client
          .request("POST", "/acp", { headers: { "acp-connection-id": "conn-1" }, body: '{"jsonrpc":"2.0"}', timeoutMs: DEADLINE_MS })
          .then(() => assert.fail("a request the server never answered resolved"), (error: unknown) => error);
        assert.ok(failure instanceof ResponseTimeoutError, String(failure));
        assert.match(failure.message, new RegExp(`^${protocol} POST /acp \\[acp-connection-id: conn-1\\] \\{"jsonrpc":"2\\.0"\\}: no response headers within ${DEADLINE_MS} ms`));
      } finally {
        await client.close();
      }
    });
  }

  it("h2c: closing the client ends its connection although the server never closes it", async () => {
    const client = createClient("h2c", url);
    await client.request("GET", "/", { timeoutMs: DEADLINE_MS }).catch(() => undefined);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("close() still waits for the server")), 5 * DEFAULT_CLOSE_GRACE_MS);
    });
    try {
      await Promise.race([client.close(), bound]);
    } finally {
      clearTimeout(timer);
    }
    assert.ok(Date.now() - started >= DEFAULT_CLOSE_GRACE_MS - 50, "the server had its grace period");
  });
});
