// Where the agent list comes from, as far as the registry's answer goes: its
// size is bounded in bytes while it is read, so an answer that never ends, or
// one whose characters take more bytes than the bound, is refused at once and
// the list falls back to the shipped snapshot.
import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import { after, before, describe, test } from "node:test";
import { loadAgentRegistry } from "../../common/agent-registry-source.ts";

const MAX_BYTES = 64 * 1024;
/** Longer than any test here may take: a refresh that only ends at its timeout fails the test. */
const TIMEOUT_MS = 30_000;

const registry = (padding: string) =>
  JSON.stringify({
    version: "1.0.0",
    padding,
    agents: [{ id: "alpha-agent", name: "Alpha", version: "1.2.3", description: "An agent on npm", distribution: { npx: { package: "@example/alpha@1.2.3" } } }],
    extensions: [],
  });

describe("the registry's answer is bounded in bytes while it is read", () => {
  let server: Server;
  let url: string;
  /** Resolves when the client lets go of the last answer's connection. */
  let closed: Promise<void> = Promise.resolve();
  let handler: (res: ServerResponse) => void = () => undefined;

  before(async () => {
    server = createServer((_req, res) => {
      closed = new Promise((resolve) => res.on("close", () => resolve()));
      handler(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/registry.json`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test("an answer without Content-Length that never ends is cut at the bound: the refresh fails at once, not at its timeout", async () => {
    handler = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(16 * 1024, " ");
      res.write("[");
      // As fast as the client reads, until it lets go.
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    };
    const started = Date.now();
    const loaded = await loadAgentRegistry({ url, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, refreshAfterMs: 0 });
    assert.equal(loaded.source, "snapshot");
    assert.match(loaded.refreshError ?? "", new RegExp(`more than ${MAX_BYTES} bytes`));
    assert.ok(Date.now() - started < TIMEOUT_MS / 2, "refused as the bound was passed, not when the time ran out");
    // The client dropped the connection: the server stops sending.
    await closed;
  });

  test("the bound counts bytes, not characters: an answer of fewer characters than the bound but more bytes is refused", async () => {
    // "é" is two bytes in UTF-8: about 0.75 × the bound in characters, 1.5 × in bytes.
    const body = registry("é".repeat(Math.floor((MAX_BYTES * 3) / 4)));
    assert.ok(body.length < MAX_BYTES && Buffer.byteLength(body) > MAX_BYTES);
    handler = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    };
    const loaded = await loadAgentRegistry({ url, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, refreshAfterMs: 0 });
    assert.equal(loaded.source, "snapshot");
    assert.match(loaded.refreshError ?? "", new RegExp(`more than ${MAX_BYTES} bytes`));
  });

  test("an answer within the bound is used", async () => {
    const body = registry("é".repeat(1000));
    handler = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    };
    const loaded = await loadAgentRegistry({ url, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, refreshAfterMs: 0 });
    assert.equal(loaded.refreshError, undefined);
    assert.equal(loaded.source, "registry");
    assert.deepEqual(loaded.registry.agents.map((a) => a.id), ["alpha-agent"]);
  });
});
