// The web client on a phone through a TLS-terminating proxy with a host name
// of its own, as docs/remote-access.md sets it up: nginx running
// deploy/nginx-remote-access.conf (the file the doc shows) for phone.test
// under /acp-remote/, with a certificate from the test's own CA; a real
// `acp-remote serve` with the demo agent behind it, told its public URL; and
// chromium at 390×844 that resolves phone.test to loopback and trusts the
// CA's key (real TLS, no certificate error ignored wholesale). Once with nginx
// stripping the prefix, once with nginx passing it on: the link the server
// printed pairs, and the page runs a prompt through the proxy, over WebSocket
// and over Streamable HTTP. A Host or Origin that is not the public URL's is
// still refused. Screenshots at 390×844 and 1400×900 go to docs/images only
// with ACP_REMOTE_UPDATE_SCREENSHOTS=1.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { buildToDist } from "./build.ts";
import { launch, openPhone, type Phone } from "./browser.ts";
import { spawnDemoServe, type DemoServe } from "./serve-demo.ts";
import { freePort } from "../helpers/managed-process.ts";
import { NGINX_REMOTE_ACCESS_CONFIG, startNginxWith, type Nginx } from "../helpers/nginx.ts";
import { makeTestCa, type TestCa } from "../helpers/test-ca.ts";

const REPO = resolve(import.meta.dirname, "../..");
const HOST = "phone.test";
const PREFIX = "/acp-remote";
const TOKEN = "remote-access-token-0123456789";

/**
 * What nginx does with the prefix: `proxy_pass` with a slash takes it off,
 * without one passes it on. The screenshots are of the first (the page looks
 * the same either way).
 */
const MODES = [
  { name: "nginx strips the prefix", upstream: (port: number) => `http://127.0.0.1:${port}/`, screenshots: true },
  { name: "nginx passes the prefix on", upstream: (port: number) => `http://127.0.0.1:${port}`, screenshots: false },
] as const;

/** The pairing link of the server's start-up line (stderr is not a terminal: it prints the link's form). */
function printedLink(stderr: string): string {
  const form = /pair with (\S+#token=)<token>/.exec(stderr)?.[1];
  assert.ok(form, `the server printed its pairing link's form:\n${stderr}`);
  return `${form}${TOKEN}`;
}

/** An HTTPS request to nginx for phone.test (SNI), with the Host and Origin given; the CA trusted. */
function throughProxy(port: number, ca: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, servername: HOST, ca, path, method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers } },
      (res) => {
        res.resume();
        res.once("end", () => resolveStatus(res.statusCode ?? 0));
      },
    );
    req.once("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
  });
}

async function runDemoTurn(page: Page): Promise<void> {
  await page.locator(".wc-new button[type=submit]").click();
  await page.locator('.sv-root[data-connection="connected"]').waitFor();
  await page.locator(".sv-input").fill("Show me around");
  await page.locator(".sv-input").press("Enter");
  await page.locator('.sv-perm button[data-option-id="allow_once"]').click();
  await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor();
  await page.locator(".sv-agent", { hasText: "You approved the edit (allow once)" }).waitFor();
}

describe("the web client through a TLS proxy with a host name of its own", () => {
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const shots = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-shots-"));
  let ca: TestCa;
  let browser: Browser;
  before(async () => {
    await buildToDist();
    ca = makeTestCa(HOST);
    browser = await launch([`--host-resolver-rules=MAP ${HOST} 127.0.0.1`, `--ignore-certificate-errors-spki-list=${ca.spkiHash}`]);
  });
  after(async () => {
    await browser?.close();
    ca?.remove();
    if (!update) rmSync(shots, { recursive: true, force: true });
  });

  for (const mode of MODES) {
    describe(mode.name, () => {
      let nginx: Nginx;
      let server: DemoServe;
      let origin: string;
      const phones: Phone[] = [];
      before(async () => {
        const port = await freePort();
        origin = `https://${HOST}:${port}`;
        server = await spawnDemoServe({ token: TOKEN, args: ["--public-url", `${origin}${PREFIX}`], env: { ACP_REMOTE_DEMO_DELAY_MS: "1" } });
        nginx = await startNginxWith({
          template: NGINX_REMOTE_ACCESS_CONFIG,
          port,
          values: {
            ACP_REMOTE_LISTEN: `127.0.0.1:${port}`,
            ACP_REMOTE_SERVER_NAME: HOST,
            ACP_REMOTE_CERT: ca.chainFile,
            ACP_REMOTE_KEY: ca.keyFile,
            ACP_REMOTE_UPSTREAM: mode.upstream(server.port),
          },
        });
      });
      after(async () => {
        for (const p of phones) {
          assert.deepEqual(await p.violations().catch(() => []), [], "no CSP violation");
          assert.deepEqual(p.foreign, [], "no request to another host");
          await p.close();
        }
        await nginx?.close();
        await server?.close();
      });

      test("regression: under a path prefix the page asked for its script and /acp at the root and stayed blank; the printed link (the public URL) pairs and a prompt runs over WebSocket through the proxy (390×844)", async () => {
        const link = printedLink(server.stderr());
        assert.equal(link, `${origin}${PREFIX}/#token=${TOKEN}`);
        const phone = await openPhone(browser, origin);
        phones.push(phone);
        const { page } = phone;
        await page.goto(link);
        await page.locator(".wc-list").waitFor();
        assert.equal(page.url(), `${origin}${PREFIX}/`, "the token left the address bar; the page stays under the prefix");
        assert.equal(await page.evaluate(() => localStorage.getItem("acp-remote.token:/acp-remote/")), TOKEN, "the token is kept under the page's prefix");
        // The app's manifest: it starts and is scoped where the page is, under the prefix.
        const manifest = await page.evaluate(async () => {
          const href = document.querySelector<HTMLLinkElement>('link[rel="manifest"]')!.href;
          const body = (await (await fetch(href)).json()) as { start_url: string; scope: string };
          return { start: new URL(body.start_url, href).href, scope: new URL(body.scope, href).href };
        });
        assert.deepEqual(manifest, { start: `${origin}${PREFIX}/`, scope: `${origin}${PREFIX}/` });
        await runDemoTurn(page);
        assert.equal(await page.locator(".wc-link").getAttribute("data-profile"), "websocket");
        if (mode.screenshots) await page.screenshot({ path: join(shots, "web-remote-access-phone.png") });
      });

      test("without WebSocket the page runs its prompt over Streamable HTTP through the proxy", async () => {
        const phone = await openPhone(browser, origin, {
          init: () => {
            delete (window as { WebSocket?: unknown }).WebSocket;
          },
        });
        phones.push(phone);
        const { page } = phone;
        await page.goto(printedLink(server.stderr()));
        await page.locator(".wc-list").waitFor();
        await runDemoTurn(page);
        assert.equal(await page.locator(".wc-link").getAttribute("data-profile"), "http");
      });

      test("at 1400×900: the session list through the proxy (the prefix without its slash leads to the page)", async () => {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        try {
          const page = await context.newPage();
          await page.goto(printedLink(server.stderr()));
          await page.locator(".wc-list").waitFor();
          await page.goto(`${origin}${PREFIX}`);
          await page.locator(".wc-item").first().waitFor();
          assert.equal(page.url(), `${origin}${PREFIX}/`);
          if (mode.screenshots) await page.screenshot({ path: join(shots, "web-remote-access-wide.png") });
        } finally {
          await context.close();
        }
      });

      test("a Host or Origin that is not the public URL's is still refused 403 through the proxy", async () => {
        const path = `${PREFIX}/acp`;
        assert.equal(await throughProxy(nginx.port, ca.caPem, path, { origin }), 200, "the public origin passes");
        assert.equal(await throughProxy(nginx.port, ca.caPem, path, { origin: "https://evil.test" }), 403);
        assert.equal(await throughProxy(nginx.port, ca.caPem, path, { origin: `http://${HOST}:${nginx.port}` }), 403, "the public host over cleartext is another origin");
        assert.equal(await throughProxy(nginx.port, ca.caPem, path, { host: "rebound.test" }), 403, "a Host that names another site (DNS rebinding)");
      });
    });
  }
});
