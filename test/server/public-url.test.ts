// `--public-url`: the address people use when a TLS-terminating proxy or
// tunnel stands in front of the sidecar. On the real sidecar (serve(), the
// fixture agent, the built web client), requests as a proxy passes them on:
// the Host and Origin of the public URL are let in and nothing more, and the
// page, its JSON endpoint, /acp and its WebSocket answer under the path
// prefix when the proxy keeps it, as well as without it when the proxy strips
// it. The same through nginx with TLS and a browser is in
// test/web-client/remote-access.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { parsePublicUrl, PublicUrls } from "../../sidecar/http/public-url.ts";
import { createClient, jsonOf, type ProtocolClient, type RawResponse } from "../helpers/http-clients.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { TOKEN } from "../helpers/transport-server.ts";
import { isRefusal, WsTestClient } from "../helpers/ws-client.ts";
import { buildToDist } from "../web-client/build.ts";

const PUBLIC = "https://phone.test:8443/acp-remote";
const PUBLIC_ORIGIN = "https://phone.test:8443";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { "content-type": "application/json" };
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });

/** The headers a proxy in front passes on for a page at the public URL: its Host name (nginx `$host`: no port) and the page's Origin. */
const THROUGH_PROXY = { host: "phone.test", origin: PUBLIC_ORIGIN };

function assertRefused(response: RawResponse, status: number): void {
  assert.equal(response.status, status, response.body);
  assert.equal((jsonOf(response)["error"] as { code: number }).code, ErrorCode.InvalidRequest);
}

describe("--public-url on the real sidecar", () => {
  let served: ServedFixture;
  let client: ProtocolClient;
  const sockets: WsTestClient[] = [];

  before(async () => {
    await buildToDist();
    served = await serveFixture({ tokens: [TOKEN], publicUrls: [PUBLIC] });
    client = createClient("http1", served.server.url);
  });
  after(async () => {
    for (const socket of sockets) await socket.close();
    await client?.close();
    await served?.close();
  });

  const post = (path: string, headers: Record<string, string>): Promise<RawResponse> =>
    client.request("POST", path, { headers: { ...AUTH, ...JSON_TYPE, ...headers }, body: INITIALIZE });

  it("regression: a page behind a TLS proxy was refused 403 (its https Origin is not the server's, its Host not a loopback name); the public URL's Origin and Host name are let in", async () => {
    const response = await post("/acp", THROUGH_PROXY);
    assert.equal(response.status, 200, response.body);
    // The proxy may pass the port on too (nginx `$http_host`).
    assert.equal((await post("/acp", { ...THROUGH_PROXY, host: "phone.test:8443" })).status, 200);
  });

  const REFUSED: Array<{ row: string; headers: Record<string, string> }> = [
    { row: "a Host that is neither loopback nor a public URL's (DNS rebinding)", headers: { host: "rebound.test" } },
    { row: "a Host that only starts like the public one", headers: { host: "phone.test.rebound.test" } },
    { row: "an Origin of another site", headers: { host: "phone.test", origin: "https://evil.test" } },
    { row: "the public host with the wrong scheme", headers: { host: "phone.test", origin: "http://phone.test:8443" } },
    { row: "the public host on another port", headers: { host: "phone.test", origin: "https://phone.test" } },
  ];
  for (const { row, headers } of REFUSED) {
    it(`still refused 403: ${row}`, async () => {
      assertRefused(await post("/acp", headers), 403);
      assertRefused(await post("/acp-remote/acp", headers), 403);
      const socket = await WsTestClient.open(`${served.server.url}/acp-remote/acp`, { headers: { ...AUTH, ...headers } });
      assert.ok(isRefusal(socket), "the WebSocket upgrade is refused");
      assert.equal(socket.status, 403);
    });
  }

  it("regression: behind a proxy that keeps the prefix, /acp-remote/acp was 404; it is /acp, over Streamable HTTP and WebSocket", async () => {
    const response = await post("/acp-remote/acp", THROUGH_PROXY);
    assert.equal(response.status, 200, response.body);
    assert.ok(response.headers["acp-connection-id"], "an initialized connection");
    const socket = await WsTestClient.open(`${served.server.url}/acp-remote/acp`, { headers: { ...AUTH, ...THROUGH_PROXY } });
    assert.ok(!isRefusal(socket), isRefusal(socket) ? `${socket.status} ${socket.body}` : "");
    sockets.push(socket);
    socket.send(INITIALIZE);
    const answer = await socket.next();
    assert.equal(answer["id"], 0);
    assert.ok(answer["result"], JSON.stringify(answer));
  });

  it("behind a proxy that keeps the prefix: the page, its assets and its agents under it; the prefix alone redirects to the page", async () => {
    const page = await client.request("GET", "/acp-remote/", { headers: THROUGH_PROXY });
    assert.equal(page.status, 200);
    assert.match(page.body, /<div id="app">/);
    const script = /src="([^"]+\.js)"/.exec(page.body)?.[1];
    assert.ok(script !== undefined && !script.startsWith("/"), `the page links its script relatively: ${script}`);
    assert.equal((await client.request("GET", `/acp-remote/${script}`, { headers: THROUGH_PROXY })).status, 200);
    assert.equal((await client.request("GET", "/acp-remote/manifest.webmanifest", { headers: THROUGH_PROXY })).status, 200);
    const agents = await client.request("GET", "/acp-remote/app/agents", { headers: { ...AUTH, ...THROUGH_PROXY } });
    assert.equal(agents.status, 200, agents.body);
    assert.equal((jsonOf(agents)["agents"] as Array<{ name: string }>)[0]?.name, "fixture");
    const bare = await client.request("GET", "/acp-remote", { headers: THROUGH_PROXY });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers["location"], "/acp-remote/");
  });

  it("behind a proxy that strips the prefix: the same page and /acp at the root", async () => {
    assert.equal((await client.request("GET", "/", { headers: THROUGH_PROXY })).status, 200);
    assert.equal((await post("/acp", THROUGH_PROXY)).status, 200);
  });

  it("the page may open its WebSocket at the public URL: connect-src names its wss: origin", async () => {
    const page = await client.request("GET", "/acp-remote/", { headers: THROUGH_PROXY });
    const connect = String(page.headers["content-security-policy"]).split("; ").find((d) => d.startsWith("connect-src "));
    assert.ok(connect?.split(" ").includes("wss://phone.test:8443"), String(connect));
  });

  it("under the prefix, the server's other paths answer (/v1) and an unknown one is 404", async () => {
    assert.equal((await client.request("GET", "/acp-remote/nothing-here", { headers: THROUGH_PROXY })).status, 404);
    assert.equal((await client.request("GET", "/acp-remote/v1/models", { headers: { ...AUTH, ...THROUGH_PROXY } })).status, 200);
  });
});

describe("public URLs: what is accepted", () => {
  it("a URL is kept as its origin and its path prefix, without the trailing slash", () => {
    assert.deepEqual(parsePublicUrl("https://Phone.Test:443/acp-remote/"), {
      url: "https://phone.test/acp-remote",
      origin: "https://phone.test",
      hostname: "phone.test",
      prefix: "/acp-remote",
    });
    assert.equal(parsePublicUrl("http://127.0.0.1:8080/proxy/8765/").prefix, "/proxy/8765");
    assert.equal(parsePublicUrl("https://box.example").prefix, "");
  });

  for (const [given, reason] of [
    ["ftp://box.example", /not an http\(s\) URL/],
    ["https://me:secret@box.example", /user name or password/],
    ["https://box.example/acp-remote?x=1", /query or a fragment/],
    ["https://box.example/#token", /query or a fragment/],
    ["https://box.example/a//b", /empty segments/],
    ["https://box.example/a%2Fb", /characters a proxy may spell otherwise/],
    ["box.example", /not a URL/],
  ] as const) {
    it(`refused: ${given}`, () => {
      assert.throws(() => parsePublicUrl(given), reason);
    });
  }

  it(`at most DEFAULT_MAX_PUBLIC_URLS; the same URL twice is one`, () => {
    const urls = new PublicUrls([], 2);
    urls.add("https://a.test");
    urls.add("https://a.test/");
    urls.add("https://b.test");
    assert.equal(urls.list().length, 2);
    assert.throws(() => urls.add("https://c.test"), /already 2 public URLs/);
  });

  for (const path of ["/acp", "/v1", "/healthz"]) {
    it(`a public URL whose path is one the server answers itself (${path}) stops the start, naming the flag`, async () => {
      await assert.rejects(serveFixture({ tokens: [TOKEN], publicUrls: [`https://box.example${path}`] }), (error: Error) => {
        assert.match(error.message, new RegExp(`^--public-url "https://box\\.example${path}": its path ${path} is one the server answers itself`));
        return true;
      });
    });
  }
});
