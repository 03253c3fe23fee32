// ACP's names as the server writes them (protocol/acp.ts) against the SDK's,
// and what the server leaves unloaded until it needs it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { methods, PROTOCOL_VERSION as SDK_PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";

/** Packages the server's modules must not load when they are imported: each only for what needs it. */
const LOADED_ON_USE = [
  // ACP's names are written in protocol/acp.ts; the SDK and its schemas (zod) are 5.9 MB of heap.
  "@agentclientprotocol/sdk",
  // A self-signed certificate is made once, for TLS without a certificate of one's own.
  "selfsigned",
  // Requests to an upstream provider of /v1, when one is configured.
  "undici",
  // A VAPID key pair made once per store, and Web Push sends.
  "web-push",
];

/** The packages resolved while `serve` and its modules are imported, in a process of their own. */
function packagesServeLoads(): string[] {
  const hook = `import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) {
  const resolved = next(specifier, context);
  const found = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(resolved.url);
  if (found) process.stderr.write("package " + found[1] + "\\n");
  return resolved;
} });`;
  const serve = fileURLToPath(new URL("../../sidecar/server/serve.ts", import.meta.url));
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, "--input-type=module", "-e", `await import(${JSON.stringify(serve)});`], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
  });
  assert.equal(run.status, 0, run.stderr);
  const output = run.stderr;
  return [...new Set(output.split("\n").filter((line) => line.startsWith("package ")).map((line) => line.slice("package ".length)))];
}

describe("ACP's names", () => {
  test("every method name is the SDK's, and so is the protocol version", () => {
    assert.deepEqual(Acp, methods);
    assert.equal(PROTOCOL_VERSION, SDK_PROTOCOL_VERSION);
  });

  test("regression: importing the server loaded the SDK (for its method names), selfsigned, undici and web-push: 16 MB of heap that every full collection marked; now each loads when it is used", () => {
    const loaded = packagesServeLoads();
    assert.ok(loaded.includes("ws"), `the hook saw the server's packages: ${loaded.join(", ")}`);
    for (const name of LOADED_ON_USE) assert.ok(!loaded.includes(name), `${name} is loaded with the server's modules`);
  });
});
