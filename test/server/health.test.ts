// /healthz and /readyz on a real server on port 0, over h2c and HTTP/1.1 (and
// h2 over TLS): answered without a token, GET and HEAD only, a small JSON body
// that is never cached; /readyz turns 503 with Retry-After and a reason when
// the node cannot take traffic: while the sidecar drains, and when a readiness
// check fails or hangs.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createHealthRoute, type Readiness } from "../../sidecar/server/health.ts";
import { DEFAULT_NOT_READY_RETRY_AFTER_S } from "../../sidecar/http/server-limits.ts";
import { createClient, HTTP_PROTOCOLS, jsonOf, type RawResponse } from "../helpers/http-clients.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { startTransportServer, type StartedServer } from "../helpers/transport-server.ts";

const TOKEN = "health-test-token-0123456789";

async function get(protocol: (typeof HTTP_PROTOCOLS)[number]["protocol"], url: string, path: string, method = "GET", ca?: string): Promise<RawResponse> {
  const client = createClient(protocol, url, ca === undefined ? {} : { ca });
  try {
    return await client.request(method, path);
  } finally {
    await client.close();
  }
}

function assertNoStoreJson(response: RawResponse): void {
  assert.equal(response.headers["cache-control"], "no-store");
  assert.equal(response.headers["content-type"], "application/json");
}

describe("health endpoints of the sidecar", () => {
  let plain: ServedFixture;
  let secure: ServedFixture;

  before(async () => {
    plain = await serveFixture({ tokens: [TOKEN] });
    secure = await serveFixture({ tokens: [TOKEN], tls: true });
  });

  after(async () => {
    await Promise.all([plain?.close(), secure?.close()]);
  });

  for (const { protocol, tls } of HTTP_PROTOCOLS) {
    it(`/healthz and /readyz answer 200 without a token over ${protocol}`, async () => {
      const url = tls ? secure.server.url : plain.server.url;
      const ca = tls ? secure.ca : undefined;
      const health = await get(protocol, url, "/healthz", "GET", ca);
      assert.equal(health.status, 200);
      assertNoStoreJson(health);
      assert.deepEqual(JSON.parse(health.body), { status: "ok" });
      const ready = await get(protocol, url, "/readyz", "GET", ca);
      assert.equal(ready.status, 200);
      assertNoStoreJson(ready);
      assert.deepEqual(JSON.parse(ready.body), { status: "ready" });
    });
  }

  it("HEAD answers the same headers and no body", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const response = await get("http1", plain.server.url, path, "HEAD");
      assert.equal(response.status, 200, path);
      assertNoStoreJson(response);
      assert.equal(response.body, "");
      assert.ok(Number(response.headers["content-length"]) > 0, "the length of the GET body");
    }
  });

  it("any other method is 405 with Allow: GET, HEAD", async () => {
    for (const protocol of ["h2c", "http1"] as const) {
      for (const [method, path] of [["POST", "/healthz"], ["DELETE", "/readyz"], ["PUT", "/readyz"]] as const) {
        const response = await get(protocol, plain.server.url, path, method);
        assert.equal(response.status, 405, `${method} ${path} over ${protocol}`);
        assert.equal(response.headers["allow"], "GET, HEAD");
        assertNoStoreJson(response);
        assert.equal(jsonOf(response)["status"], "error");
      }
    }
  });

  it("a query string does not change the answer; other paths under them are not health endpoints", async () => {
    assert.equal((await get("h2c", plain.server.url, "/readyz?full=1")).status, 200);
    assert.equal((await get("h2c", plain.server.url, "/healthz/extra")).status, 404);
  });

  it("a token is not needed, and a wrong one does not matter either", async () => {
    const client = createClient("h2c", plain.server.url);
    try {
      const response = await client.request("GET", "/readyz", { headers: { authorization: "Bearer wrong-token" } });
      assert.equal(response.status, 200);
    } finally {
      await client.close();
    }
  });

  it("a browser Origin the server does not serve is refused with 403, in the same JSON shape", async () => {
    const client = createClient("http1", plain.server.url);
    try {
      const response = await client.request("GET", "/readyz", { headers: { origin: "https://evil.example" } });
      assert.equal(response.status, 403);
      assertNoStoreJson(response);
      assert.equal(jsonOf(response)["status"], "error");
    } finally {
      await client.close();
    }
  });
});

describe("/readyz while the sidecar drains", () => {
  it("answers 503 draining with Retry-After on an open connection, while new connections are refused and /healthz stays 200", async () => {
    const { server, close } = await serveFixture({ tokens: [TOKEN] });
    // Opened before the drain: a balancer's pooled connection.
    const open = createClient("h2c", server.url);
    try {
      assert.equal((await open.request("GET", "/readyz")).status, 200);
      const drained = server.drain();
      const ready = await open.request("GET", "/readyz");
      assert.equal(ready.status, 503);
      assertNoStoreJson(ready);
      assert.equal(ready.headers["retry-after"], String(DEFAULT_NOT_READY_RETRY_AFTER_S));
      assert.deepEqual(JSON.parse(ready.body), { status: "unavailable", reason: "draining" });
      assert.equal((await open.request("GET", "/healthz")).status, 200);
      await assert.rejects(get("http1", server.url, "/readyz"), (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED");
      // No turn runs: the drain is over at once.
      assert.equal(await drained, true);
    } finally {
      await open.close();
      await close();
    }
  });
});

describe("/readyz with readiness checks that fail", () => {
  let failing: StartedServer;
  let hanging: StartedServer;
  let release: () => void = () => {};

  before(async () => {
    const throwing: Readiness = { check: () => Promise.reject(new Error("store unreachable: connection refused")) };
    const stuck: Readiness = { check: () => new Promise((resolve) => (release = () => resolve({ ready: true }))) };
    failing = await startTransportServer({ routes: [createHealthRoute({ readiness: throwing })] });
    hanging = await startTransportServer({ routes: [createHealthRoute({ readiness: stuck, checkTimeoutMs: 100, retryAfterSeconds: 7 })] });
  });

  after(async () => {
    release();
    await Promise.all([failing?.close(), hanging?.close()]);
  });

  it("a check that throws is 503 with its message as the reason", async () => {
    const response = await get("h2c", failing.url, "/readyz");
    assert.equal(response.status, 503);
    assert.deepEqual(JSON.parse(response.body), { status: "unavailable", reason: "readiness check failed: store unreachable: connection refused" });
    assert.equal((await get("h2c", failing.url, "/healthz")).status, 200, "liveness does not depend on readiness");
  });

  it("a check that does not answer in time is 503, not a request that hangs", async () => {
    const response = await get("http1", hanging.url, "/readyz");
    assert.equal(response.status, 503);
    assert.equal(response.headers["retry-after"], "7");
    assert.deepEqual(JSON.parse(response.body), { status: "unavailable", reason: "readiness check took longer than 100 ms" });
  });
});
