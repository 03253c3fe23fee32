// `acp-remote connect` reads its editor's lines with the same reader as the
// sidecar reads agents (common/ndjson.ts): a line nested deeper than
// DEFAULT_MAX_JSON_DEPTH is not relayed. A request is answered -32600 with its
// own id (not the -32700 of a line that does not parse), a notification gets
// no answer, and the relay goes on.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { DEFAULT_MAX_JSON_DEPTH } from "../../common/json-depth.ts";
import { spawnConnect } from "../helpers/connect-child.ts";
import { startSdkServer } from "../helpers/sdk-server.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);

test("an editor's request 10,000 levels deep is answered -32600 with its id, a deep notification gets nothing, and the relay goes on", async () => {
  const server = await startSdkServer("h2c");
  cleanups.push(() => server.close());
  const c = spawnConnect([server.url]);
  cleanups.push(() => c.kill());
  const answers = new Promise<Array<{ id: unknown; error?: { code: number; message: string }; result?: unknown }>>((resolve) => {
    let buffer = "";
    const lines: Array<{ id: unknown }> = [];
    c.child.stdout.setEncoding("utf8");
    c.child.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, nl)) as { id: unknown });
        buffer = buffer.slice(nl + 1);
        if (lines.length === 2) resolve(lines);
      }
    });
  });
  c.child.stdin.write(`{"jsonrpc":"2.0","method":"session/cancel","params":{"x":${deep(10_000)}}}\n`);
  c.child.stdin.write(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"x":${deep(10_000)}}}\n`);
  c.child.stdin.write('{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n');
  const [deepAnswer, init] = await answers;
  assert.deepEqual([deepAnswer?.id, deepAnswer?.error?.code], [9, -32600]);
  assert.match(deepAnswer?.error?.message ?? "", new RegExp(`deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`));
  assert.equal(init?.id, 10);
  assert.ok(init?.result !== undefined, JSON.stringify(init));
  c.child.stdin.end();
  assert.equal(await c.exited, 0);
  assert.match(c.stderr(), /skipped a "session\/cancel" message: .*deeper than/);
});
