// An agent that closed its stdout but has not exited: its connection refuses
// any write at once. A notification to it is sent from event listeners (an
// aborted /v1 request's signal) and timers (the sweep of expired sessions),
// where a throw ends the process; so the failure is logged instead.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { NODE } from "../helpers/connect-child.ts";
import { spawnServe, type ServeChild } from "../helpers/serve-child.ts";

const TOKEN = "agent-stdout-closed-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const RAW_AGENT = new URL("./fixtures/raw-agent.ts", import.meta.url).pathname;

let server: ServeChild;
before(async () => {
  server = await spawnServe({ token: TOKEN, moreAgents: [`raw=${NODE} ${RAW_AGENT}`] });
});
after(async () => {
  await server.close();
});

/** Resolves once the server's stderr shows `text`; fails after `ms`. */
function stderrShows(text: string, ms = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!server.stderr().includes(text)) return;
      clearTimeout(timer);
      server.child.stderr.off("data", check);
      resolve();
    };
    const timer = setTimeout(() => {
      server.child.stderr.off("data", check);
      reject(new Error(`stderr never showed ${JSON.stringify(text)}:\n${server.stderr()}`));
    }, ms);
    // After the helper's own listener, which appends the chunk to stderr().
    server.child.stderr.on("data", check);
    check();
  });
}

test("a /v1 client aborting its request to an agent that closed its stdout: the session/cancel is logged as not sent, and the server stays up", async () => {
  const controller = new AbortController();
  const request = fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    signal: controller.signal,
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ model: "raw", messages: [{ role: "user", content: "mute" }] }),
  }).then(
    (response) => `answered ${response.status}`,
    (error: Error) => error.name,
  );
  await stderrShows("muted");
  controller.abort();
  assert.equal(await request, "AbortError");
  await stderrShows("agent raw: sending session/cancel failed: Connection is closed");
  const models = await fetch(`${server.url}/v1/models`, { headers: AUTH });
  await models.arrayBuffer();
  assert.equal(models.status, 200);
  assert.equal(server.child.exitCode, null, server.stderr());
});
