// One loopback rule (common/loopback.ts) for every place that asks: `serve`
// deciding whether `--no-auth` may be used, the Host/Origin check of a
// loopback-bound server, and the extension trusting the sidecar's self-signed
// certificate. The table is the rule; the regression below runs the real
// `serve` and the real Host check side by side on the names they used to
// disagree on.
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { isLoopbackHost } from "../../common/loopback.ts";
import { OriginPolicy } from "../../sidecar/http/origin.ts";
import { type RunningServer, serve } from "../../sidecar/server/serve.ts";

const LOOPBACK: readonly string[] = [
  "localhost",
  "LOCALHOST",
  "localhost.",
  "app.localhost",
  "a.b.localhost",
  "App.LocalHost.",
  "127.0.0.1",
  "127.0.0.2",
  "127.255.255.255",
  "127.1.2.3.",
  "::1",
  "[::1]",
  "0:0:0:0:0:0:0:1",
  "[0:0:0:0:0:0:0:1]",
  "::0:1",
];

const NOT_LOOPBACK: readonly string[] = [
  "",
  "0.0.0.0",
  "::",
  "[::]",
  "128.0.0.1",
  "126.255.255.255",
  "10.0.0.1",
  "example.com",
  "localhost.example.com",
  "localhostx",
  "notlocalhost",
  ".localhost",
  "127.0.0.1.example.com",
  "::2",
  "::ffff:127.0.0.1",
  "[::1",
  "::1%lo",
];

describe("loopback: localhost, *.localhost, 127.0.0.0/8 and ::1", () => {
  for (const name of LOOPBACK) test(`${JSON.stringify(name)} is loopback`, () => assert.equal(isLoopbackHost(name), true));
  for (const name of NOT_LOOPBACK) test(`${JSON.stringify(name)} is not loopback`, () => assert.equal(isLoopbackHost(name), false));
});

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** What `serve` says to `--no-auth` on this host: refused, or not refused (it started, or failed for another reason). */
async function noAuthRefused(host: string): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-loopback-"));
  dirs.push(dataDir);
  let server: RunningServer | undefined;
  try {
    server = await serve({ host, port: 0, agents: [], tokens: [], auth: false, dataDir, allowedOrigins: [], log: () => {} });
    return false;
  } catch (error) {
    // A name this machine's resolver does not map (app.localhost on some systems) fails to listen: not a refusal.
    return /--no-auth is only allowed on a loopback host/.test(String(error));
  } finally {
    await server?.close();
  }
}

/** What the Host check of a loopback-bound server says to a request addressed to this host. */
function hostRefused(host: string): boolean {
  const authority = host.includes(":") && !host.startsWith("[") ? `[${host}]:8765` : `${host}:8765`;
  const policy = new OriginPolicy({ bindHost: "127.0.0.1", secure: false });
  return policy.refusal({ headers: { host: authority } } as unknown as IncomingMessage) !== undefined;
}

describe("regression: --no-auth and the Host check disagreed on loopback names", () => {
  // serve accepted only `localhost`, dotted 127.x and `::1`/`[::1]`; the Host check also `*.localhost`,
  // upper case, a trailing dot and ::1 written out. `--no-auth --host app.localhost` was refused
  // while the same server took `Host: app.localhost` as loopback.
  for (const host of ["app.localhost", "LOCALHOST", "0:0:0:0:0:0:0:1", "127.0.0.2", "example.com", "0.0.0.0"]) {
    test(`--no-auth on ${host} is refused exactly when a request with Host ${host} is`, async () => {
      assert.equal(await noAuthRefused(host), hostRefused(host));
    });
  }

  test("--no-auth on LOCALHOST starts and answers without a token", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-loopback-"));
    dirs.push(dataDir);
    const server = await serve({ host: "LOCALHOST", port: 0, agents: [], tokens: [], auth: false, dataDir, allowedOrigins: [], log: () => {} });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/v1/models`);
      assert.equal(response.status, 200, await response.text());
    } finally {
      await server.close();
    }
  });
});
