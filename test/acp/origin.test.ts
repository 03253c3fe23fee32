// The Origin/Host policy in front of routing (design: decision 8), one case
// per rule, on plain request headers.
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { isLoopbackHost, OriginPolicy } from "../../sidecar/http/origin.ts";

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
