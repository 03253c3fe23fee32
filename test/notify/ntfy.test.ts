// ntfy as a second channel, from a real `serve` (fixture agent, port 0) to an
// ntfy stand-in on loopback: a waiting permission request is published as
// JSON with the server's token and `http` actions; firing an action's request
// as the ntfy app does answers the permission, and a second use is refused.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acp } from "../../protocol/acp.ts";
import { NOTIFY_ANSWER_PATH } from "../../protocol/notify.ts";
import { parseServeArgs } from "../../sidecar/cli/serve-args.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { AcpPeer } from "../helpers/acp-peer.ts";
import { startNtfyServer, type NtfyServer } from "../helpers/ntfy-server.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";

const MAIN = "ntfy-main-token-0123456789";
const NTFY_TOKEN = "tk_ntfy-stand-in-0123456789";
const TOPIC = "acp-remote-test-topic";
const TEST_TIMEOUT_MS = 60_000;

interface HttpAction {
  action: string;
  label: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  clear: boolean;
}

describe("ntfy notifications", () => {
  let dir: string;
  let ntfy: NtfyServer;
  let server: RunningServer;
  let laptop: AcpPeer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-ntfy-"));
    ntfy = await startNtfyServer();
    server = await serveFixtureAgent({
      tokens: [MAIN],
      dataDir: join(dir, "data"),
      notify: { ntfy: `ntfy:${ntfy.url}/${TOPIC}`, ntfyToken: NTFY_TOKEN },
    });
    laptop = await AcpPeer.open(server.url, MAIN);
  });

  after(async () => {
    await laptop?.close();
    await server?.close();
    await ntfy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Fires an ntfy `http` action the way the ntfy app does. */
  async function fire(action: HttpAction): Promise<{ status: number; body: unknown }> {
    const response = await fetch(action.url, { method: action.method, headers: action.headers, body: action.body });
    return { status: response.status, body: await response.json() };
  }

  test("a waiting request is published with Allow and Reject; firing Allow answers the agent, and a second use is refused", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { sessionId } = (await laptop.request(Acp.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const turn = laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "asks 2 docs/notes.md" }] }, 40_000);
    const [published] = await ntfy.waitFor(1);
    assert.equal(published!.authorization, `Bearer ${NTFY_TOKEN}`);
    const message = published!.message;
    assert.equal(message["topic"], TOPIC);
    assert.equal(message["title"], "Edit docs/notes.md:1");
    assert.match(String(message["message"]), /^edit: docs\/notes\.md:1\n/);
    assert.equal(message["priority"], 4);
    assert.equal(message["click"], `${server.url}/#/s/fixture/${encodeURIComponent(sessionId)}`);
    const actions = message["actions"] as HttpAction[];
    assert.deepEqual(actions.map((a) => [a.action, a.label, a.method, a.url, a.clear]), [
      ["http", "Allow once", "POST", `${server.url}${NOTIFY_ANSWER_PATH}`, true],
      ["http", "Reject", "POST", `${server.url}${NOTIFY_ANSWER_PATH}`, true],
    ]);

    assert.deepEqual(await fire(actions[0]!), { status: 200, body: { answered: true, optionId: "allow_once" } });
    const second = await fire(actions[0]!);
    assert.equal(second.status, 410, JSON.stringify(second.body));
    assert.equal((await fire(actions[1]!)).status, 410, "the other button of a used notification is used up too");

    // One at a time: the second request is published once the first is answered; Reject answers it.
    const [, next] = await ntfy.waitFor(2);
    assert.equal(next!.message["title"], "Edit docs/notes.md:2");
    assert.equal((await fire((next!.message["actions"] as HttpAction[])[1]!)).status, 200);
    await turn;
    assert.match(laptop.agentText(sessionId), /outcomes: allow_once, reject_once/);
    const [, , ended] = await ntfy.waitFor(3);
    assert.equal(ended!.message["message"], "Finished: outcomes: allow_once, reject_once");
    assert.equal(ended!.message["actions"], undefined);
  });

  test("--notify takes ntfy:URL/TOPIC, from the flag or ACP_REMOTE_NOTIFY, with its token from ACP_REMOTE_NTFY_TOKEN", () => {
    const parsed = parseServeArgs(["--notify", "ntfy:https://ntfy.example/my_topic-1"], { ACP_REMOTE_NTFY_TOKEN: "tk_1" });
    assert.ok(parsed !== "help");
    assert.deepEqual(parsed.notify, { ntfy: "ntfy:https://ntfy.example/my_topic-1", ntfyToken: "tk_1" });
    const fromEnv = parseServeArgs([], { ACP_REMOTE_NOTIFY: "ntfy:https://ntfy.example/sub/path/topic" });
    assert.ok(fromEnv !== "help");
    assert.deepEqual(fromEnv.notify, { ntfy: "ntfy:https://ntfy.example/sub/path/topic" });
    assert.throws(() => parseServeArgs(["--notify", "https://ntfy.example/topic"], {}), /--notify: .*is not ntfy:URL\/TOPIC/);
    assert.throws(() => parseServeArgs(["--notify", "ntfy:https://ntfy.example/"], {}), /--notify: .*topic/);
    assert.throws(() => parseServeArgs(["--notify", "ntfy:https://user:pw@ntfy.example/t"], {}), /--notify: .*ACP_REMOTE_NTFY_TOKEN/);
  });
});
