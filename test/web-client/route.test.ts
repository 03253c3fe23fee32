// The web client's route on the real HTTP front: the page and its assets with
// their security and cache headers, ETag revalidation, HEAD, /app/agents
// behind the token, exact paths only (nothing under / reaches the disk), and
// --no-web turning the page off in a real `acp-remote serve`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { Authenticator } from "../../sidecar/http/auth.ts";
import { createWebRoute } from "../../sidecar/web/web-route.ts";
import { parseServeArgs } from "../../sidecar/cli/serve-args.ts";
import { startTransportServer, TOKEN, type StartedServer } from "../helpers/transport-server.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";
import { buildToTemp, type BuiltClient } from "./build.ts";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP/1.1 request: the path goes out exactly as written (fetch would normalise `..`). */
function get(base: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function assertSecurityHeaders(answer: Answer, port: number): void {
  const csp = String(answer.headers["content-security-policy"]);
  for (const directive of [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ws://127.0.0.1:${port}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ]) {
    assert.ok(csp.split("; ").includes(directive), `CSP has "${directive}": ${csp}`);
  }
  assert.ok(!/unsafe|\*|https?:/.test(csp), `nothing loose in the CSP: ${csp}`);
  assert.equal(answer.headers["x-content-type-options"], "nosniff");
  assert.equal(answer.headers["referrer-policy"], "no-referrer");
}

describe("web client route", () => {
  let built: BuiltClient;
  let server: StartedServer;
  before(async () => {
    built = await buildToTemp();
    const route = createWebRoute({ auth: new Authenticator([TOKEN]), agentNames: () => ["demo", "other"], defaultCwd: async () => "/srv/project", secure: false, dir: built.dir });
    server = await startTransportServer({ routes: [route] });
  });
  after(async () => {
    await server?.close();
    built?.remove();
  });

  test("/ is the page, revalidated on every load, with the strict headers", async () => {
    const page = await get(server.url, "/");
    assert.equal(page.status, 200);
    assert.equal(page.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(page.headers["cache-control"], "no-cache");
    assertSecurityHeaders(page, server.port);
    assert.ok(page.body.includes(`src="${built.js.name}"`) && page.body.includes(`href="${built.css.name}"`), "the page names the hashed bundle, relative to itself");
    assert.ok(!/(?:src|href)="\//.test(page.body), "no link from the root: the page works under a proxy's path prefix");
    assert.ok(!/<script(?![^>]*\bsrc=)/.test(page.body) && !/\sstyle=/.test(page.body), "no inline script or style");
    const index = await get(server.url, "/index.html");
    assert.equal(index.body, page.body);
  });

  test("hashed assets are immutable; the manifest, icons and service worker revalidate; each has its type", async () => {
    const expected: Array<[string, string, RegExp]> = [
      [`/${built.js.name}`, "text/javascript; charset=utf-8", /immutable/],
      [`/${built.css.name}`, "text/css; charset=utf-8", /immutable/],
      ["/manifest.webmanifest", "application/manifest+json", /^no-cache$/],
      ["/icon-192.png", "image/png", /^no-cache$/],
      ["/icon-512.png", "image/png", /^no-cache$/],
      ["/icon.svg", "image/svg+xml", /^no-cache$/],
      // A new build's worker must reach the page: under its fixed name, never cached for long.
      ["/sw.js", "text/javascript; charset=utf-8", /^no-cache$/],
    ];
    for (const [path, type, cache] of expected) {
      const answer = await get(server.url, path);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers["content-type"], type, path);
      assert.match(String(answer.headers["cache-control"]), cache, path);
      assertSecurityHeaders(answer, server.port);
    }
    assert.match(String((await get(server.url, `/${built.js.name}`)).headers["cache-control"]), /max-age=31536000/);
    const manifest = JSON.parse((await get(server.url, "/manifest.webmanifest")).body) as { start_url: string; icons: Array<{ src: string; sizes: string }> };
    assert.equal(manifest.start_url, "./", "the app starts where its manifest is, under any path prefix");
    for (const icon of manifest.icons) assert.equal((await get(server.url, new URL(icon.src, `${server.url}/manifest.webmanifest`).pathname)).status, 200, `${icon.src} is served`);
    assert.deepEqual(manifest.icons.map((i) => i.sizes).filter((s) => s !== "any").sort(), ["192x192", "512x512"]);
  });

  test("an ETag answers 304 without a body", async () => {
    const first = await get(server.url, "/");
    const etag = String(first.headers["etag"]);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await get(server.url, "/", { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body, "");
    assertSecurityHeaders(again, server.port);
    assert.equal((await get(server.url, "/", { headers: { "If-None-Match": '"other"' } })).status, 200);
  });

  test("HEAD has the headers of GET and no body", async () => {
    const head = await get(server.url, "/", { method: "HEAD" });
    const full = await get(server.url, "/");
    assert.equal(head.status, 200);
    assert.equal(head.body, "");
    assert.equal(head.headers["content-length"], full.headers["content-length"]);
    assert.equal(head.headers["etag"], full.headers["etag"]);
    assertSecurityHeaders(head, server.port);
  });

  test("other methods are 405 with Allow", async () => {
    const post = await get(server.url, "/", { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(post.headers["allow"], "GET, HEAD");
    assertSecurityHeaders(post, server.port);
  });

  test("/app/agents needs the token", async () => {
    const none = await get(server.url, "/app/agents");
    assert.equal(none.status, 401);
    assert.match(String(none.headers["www-authenticate"]), /^Bearer/);
    assertSecurityHeaders(none, server.port);
    assert.equal((await get(server.url, "/app/agents", { headers: { Authorization: "Bearer wrong-token" } })).status, 401);
    const ok = await get(server.url, "/app/agents", { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers["cache-control"], "no-store");
    assert.deepEqual(JSON.parse(ok.body), { agents: [{ name: "demo", isDefault: true, cwd: "/srv/project" }, { name: "other", isDefault: false, cwd: "/srv/project" }] });
  });

  test("only the built files are served: traversal and unknown paths are the front door's 404", async () => {
    for (const path of ["/..%2f..%2fpackage.json", "/%2e%2e/", "/%2e%2e/package.json", "/../package.json", "//etc/passwd", "/app", "/app/", "/nope.js", "/index.html/", "/.%2Findex.html"]) {
      const answer = await get(server.url, path);
      assert.equal(answer.status, 404, path);
      assert.equal(answer.headers["content-type"], "application/json", `${path}: the front door's JSON 404`);
    }
    // /acp keeps its own answers (a GET without Accept: text/event-stream is refused, not served as a page).
    const acp = await get(server.url, "/acp", { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.notEqual(acp.status, 200);
    assert.equal(acp.headers["content-security-policy"], undefined);
  });

  test("the page names the server's own WebSocket origin from the Host it was asked with", async () => {
    const other = await get(server.url, "/", { headers: { Host: `localhost:${server.port}` } });
    assert.match(String(other.headers["content-security-policy"]), new RegExp(`connect-src 'self' ws://localhost:${server.port};`));
  });
});

describe("--no-web", () => {
  let child: DemoServe;
  before(async () => {
    child = await spawnDemoServe({ token: TOKEN, args: ["--no-web"] });
  });
  after(async () => {
    await child?.close();
  });

  test("parses to web: false; the default serves the page", () => {
    const off = parseServeArgs(["--no-web"], {});
    const on = parseServeArgs([], {});
    assert.ok(off !== "help" && on !== "help");
    assert.equal(off.web, false);
    assert.equal(on.web, true);
  });

  test("a real serve with --no-web answers 404 at / and at /app/agents", async () => {
    for (const path of ["/", "/index.html", "/app/agents"]) {
      const answer = await get(child.url, path, { headers: { Authorization: `Bearer ${TOKEN}` } });
      assert.equal(answer.status, 404, path);
    }
  });
});
