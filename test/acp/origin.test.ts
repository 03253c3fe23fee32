// The Origin/Host policy in front of routing (design: decision 8), one case
// per rule, on plain request headers; then CORS for allowed origins over a real server.
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { isLoopbackHost } from "../../common/loopback.ts";
import { OriginPolicy } from "../../sidecar/http/origin.ts";
import { createClient } from "../helpers/http-clients.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

interface Row {
  rule: string;
  bind: string;
  secure?: boolean;
  allowed?: string[];
  headers: Record<string, string>;
  refused: boolean;
}

const ROWS: Row[] = [
  { rule: "no Origin (not a browser): allowed", bind: "127.0.0.1", headers: { host: "127.0.0.1:8765" }, refused: false },
  { rule: "the server's own origin: allowed", bind: "0.0.0.0", headers: { host: "box.example:8765", origin: "http://box.example:8765" }, refused: false },
  { rule: "own host with the wrong scheme: refused", bind: "0.0.0.0", secure: true, headers: { host: "box.example:8765", origin: "http://box.example:8765" }, refused: true },
  { rule: "a loopback origin when bound to loopback: allowed", bind: "127.0.0.1", headers: { host: "127.0.0.1:8765", origin: "http://localhost:3000" }, refused: false },
  { rule: "a loopback origin when bound to all interfaces: refused", bind: "0.0.0.0", headers: { host: "box.example:8765", origin: "http://localhost:3000" }, refused: true },
  { rule: "a listed origin (allowedOrigins): allowed", bind: "0.0.0.0", allowed: ["https://app.example"], headers: { host: "box.example:8765", origin: "https://app.example" }, refused: false },
  { rule: "a listed origin matches after normalisation (default port, case)", bind: "0.0.0.0", allowed: ["HTTPS://App.Example:443"], headers: { host: "box.example", origin: "https://app.example" }, refused: false },
  { rule: "any other origin: refused", bind: "127.0.0.1", headers: { host: "127.0.0.1:8765", origin: "https://evil.example" }, refused: true },
  { rule: "Origin: null (sandboxed frames, file:): refused", bind: "127.0.0.1", headers: { host: "127.0.0.1:8765", origin: "null" }, refused: true },
  { rule: "a garbled Origin: refused", bind: "127.0.0.1", headers: { host: "127.0.0.1:8765", origin: "::not a url" }, refused: true },
  { rule: "bound to loopback, Host not a loopback name (DNS rebinding): refused", bind: "127.0.0.1", headers: { host: "rebound.example:8765" }, refused: true },
  { rule: "bound to loopback, Host [::1]: allowed", bind: "::1", headers: { host: "[::1]:8765" }, refused: false },
  { rule: "bound to loopback, Host *.localhost: allowed", bind: "localhost", headers: { host: "dev.localhost:8765" }, refused: false },
  { rule: "bound to all interfaces, any Host: allowed", bind: "0.0.0.0", headers: { host: "box.example:8765" }, refused: false },
  { rule: "HTTP/2 :authority is read like Host", bind: "127.0.0.1", headers: { ":authority": "rebound.example:8765" }, refused: true },
];

describe("Origin and Host policy", () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const policy = new OriginPolicy({ bindHost: row.bind, secure: row.secure ?? false, allowedOrigins: row.allowed ?? [] });
      const refusal = policy.refusal(request(row.headers));
      assert.equal(refusal !== undefined, row.refused, refusal ?? "allowed");
    });
  }

  it("loopback names", () => {
    for (const name of ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "a.localhost", "localhost."]) assert.equal(isLoopbackHost(name), true, name);
    for (const name of ["0.0.0.0", "example.com", "localhost.example.com", "128.0.0.1", "::"]) assert.equal(isLoopbackHost(name), false, name);
  });
});

describe("CORS for an allowed browser origin", () => {
  const APP = "https://app.example";
  const TOKEN_HEADER = { authorization: `Bearer ${TOKEN}` };

  it("a preflight from an allowed origin: 204 with the methods, the asked headers and a max age, before auth", async () => {
    const server = await startTransportServer({ allowedOrigins: [APP] });
    const client = createClient("h2c", server.url);
    try {
      const response = await client.request("OPTIONS", "/acp", {
        headers: { origin: APP, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, acp-connection-id" },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers["access-control-allow-origin"], APP);
      assert.equal(response.headers["access-control-allow-credentials"], "true");
      assert.match(String(response.headers["access-control-allow-methods"]), /POST/);
      assert.match(String(response.headers["access-control-allow-headers"]), /acp-connection-id/);
      assert.ok(response.headers["access-control-max-age"] !== undefined);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("the actual request: the page may read Acp-Connection-Id", async () => {
    const server = await startTransportServer({ allowedOrigins: [APP] });
    const client = createClient("http1", server.url);
    try {
      const response = await client.request("POST", "/acp", {
        headers: { ...TOKEN_HEADER, origin: APP, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }),
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers["access-control-allow-origin"], APP);
      assert.match(String(response.headers["access-control-expose-headers"]), /acp-connection-id/);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a preflight from an origin that is not allowed: 403, no CORS headers", async () => {
    const server = await startTransportServer({ allowedOrigins: [APP] });
    const client = createClient("h2c", server.url);
    try {
      const response = await client.request("OPTIONS", "/acp", { headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
      assert.equal(response.status, 403);
      assert.equal(response.headers["access-control-allow-origin"], undefined);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
