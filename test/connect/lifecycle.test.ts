// The stdio side's lifecycle: connect's stdin ending is the editor going away.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnConnect } from "../helpers/connect-child.ts";
import { startSdkServer } from "../helpers/sdk-server.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

for (const transport of ["http", "ws"] as const) {
  test(`--transport ${transport}: stdin ends right after two requests: both answers are written, the connection is ended, exit 0`, async () => {
    const server = await startSdkServer("http1");
    cleanups.push(() => server.close());
    const c = spawnConnect([server.url, "--transport", transport]);
    cleanups.push(() => c.kill());
    let out = "";
    c.child.stdout.setEncoding("utf8");
    c.child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    c.child.stdin.end(
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n' +
        '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n',
    );
    assert.equal(await c.exited, 0);
    const answers = out.trim().split("\n").map((line) => JSON.parse(line) as { id: number; result?: { sessionId?: string } });
    assert.deepEqual(
      answers.map((a) => a.id),
      [0, 1],
    );
    assert.equal(typeof answers[1]?.result?.sessionId, "string");
    if (transport === "http") assert.equal(server.requests.filter((r) => r.method === "DELETE").length, 1);
  });
}
