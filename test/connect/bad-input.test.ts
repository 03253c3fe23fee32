// What goes wrong before or around the relay: a server that is not there,
// an editor that writes garbage, a command line that makes no sense.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { asEditor, spawnConnect, type EditorLog } from "../helpers/connect-child.ts";
import { startSdkServer } from "../helpers/sdk-server.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Lines the child wrote on stdout, parsed, once `count` arrived. */
function readLines(stdout: NodeJS.ReadableStream, count: number): Promise<unknown[]> {
  return new Promise((resolve) => {
    let buffer = "";
    const lines: unknown[] = [];
    stdout.setEncoding("utf8");
    stdout.on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        if (lines.length === count) resolve(lines);
      }
    });
  });
}

for (const transport of ["http", "ws", "auto"] as const) {
  test(`unreachable server, --transport ${transport}: JSON-RPC error to initialize, stderr says so, exit code 1`, async () => {
    const port = await closedPort();
    const c = spawnConnect([`http://127.0.0.1:${port}`, "--transport", transport]);
    cleanups.push(() => c.kill());
    const log: EditorLog = { updates: [], permissions: [] };
    await asEditor(c, log, async (ctx) => {
      await assert.rejects(ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }), (error: Error & { code?: number }) => {
        assert.equal(error.code, -32603);
        assert.match(error.message, /cannot connect to http:\/\/127\.0\.0\.1:\d+\/.*ECONNREFUSED/);
        return true;
      });
    });
    assert.equal(await c.exited, 1);
    assert.match(c.stderr(), /cannot connect to .*ECONNREFUSED/);
  });
}

test("a TLS server whose certificate is not trusted: the editor is told why, exit code 1; --insecure accepts it", async () => {
  const server = await startSdkServer("h2");
  cleanups.push(() => server.close());
  const untrusted = spawnConnect([server.url]);
  cleanups.push(() => untrusted.kill());
  const log: EditorLog = { updates: [], permissions: [] };
  await asEditor(untrusted, log, async (ctx) => {
    await assert.rejects(ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }), /self-signed certificate/);
  });
  assert.equal(await untrusted.exited, 1);
  assert.match(untrusted.stderr(), /cannot connect to https:\/\/127\.0\.0\.1:\d+\/acp: .*self-signed certificate.*--ca FILE, or accept any with --insecure/);

  const insecure = spawnConnect([server.url, "--insecure"]);
  cleanups.push(() => insecure.kill());
  await asEditor(insecure, log, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    assert.equal(init.agentInfo?.name, "sdk-test-agent");
  });
  assert.equal(await insecure.exited, 0);
});

test("an editor that writes garbage gets -32700 / -32600 answers and the relay goes on", async () => {
  const server = await startSdkServer("h2c");
  cleanups.push(() => server.close());
  const c = spawnConnect([server.url]);
  cleanups.push(() => c.kill());
  const answers = readLines(c.child.stdout, 4);
  c.child.stdin.write("this is not json\n");
  c.child.stdin.write('{"hello":"world"}\n');
  c.child.stdin.write('{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n');
  c.child.stdin.write('{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n');
  const [garbage, notRpc, beforeInit, init] = (await answers) as Array<{ id: unknown; error?: { code: number; message: string }; result?: unknown }>;
  assert.deepEqual([garbage?.id, garbage?.error?.code], [null, -32700]);
  assert.deepEqual([notRpc?.id, notRpc?.error?.code], [null, -32600]);
  assert.deepEqual([beforeInit?.id, beforeInit?.error?.code], [7, -32600]);
  assert.match(beforeInit?.error?.message ?? "", /first request must be initialize/);
  assert.equal(init?.id, 8);
  assert.ok(init?.result !== undefined);
  c.child.stdin.end();
  assert.equal(await c.exited, 0);
  assert.match(c.stderr(), /not JSON/);
});

const usageRows: Array<[string, string[], RegExp]> = [
  ["no URL", [], /the server URL is missing/],
  ["a URL that is not one", ["not a url"], /is not a URL/],
  ["a ws:// URL", ["ws://127.0.0.1:1/acp"], /must be http:\/\/ or https:\/\//],
  ["an unknown transport", ["http://127.0.0.1:1", "--transport", "carrier-pigeon"], /--transport must be http, ws or auto/],
  ["an unknown option", ["http://127.0.0.1:1", "--frobnicate"], /unknown flag --frobnicate \(/],
  ["a mistyped option", ["http://127.0.0.1:1", "--insecrue"], /unknown flag --insecrue, did you mean --insecure\?/],
  ["a --ca file that does not exist", ["http://127.0.0.1:1", "--ca", "/nonexistent/ca.pem"], /cannot read --ca/],
];
for (const [name, args, message] of usageRows) {
  test(`bad command line (${name}): one line on stderr that says so and points at --help, exit code 2`, async () => {
    const c = spawnConnect(args);
    cleanups.push(() => c.kill());
    assert.equal(await c.exited, 2);
    assert.match(c.stderr(), message);
    // The usage is not printed under the error, where it buried it.
    assert.match(c.stderr(), /^acp-remote connect: [^\n]* \(see acp-remote connect --help\)\n$/);
  });
}
