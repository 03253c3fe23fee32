// The notice of a turn's end carries the first line of the agent's answer:
// the hub keeps the start of the answer, bounded, until a line with text is
// whole. The real sidecar with its fixture agent, and the official ACP client
// over WebSocket; the notices as the hub tells them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { client, methods, PROTOCOL_VERSION, type ClientConnection } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { DEFAULT_NOTICE_ANSWER_CHARS } from "../../sidecar/limits.ts";
import type { HubNotice } from "../../sidecar/hub/types.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";

const TOKEN = "session-notices-token-0123456789";
/**
 * CPU the server may spend on a turn of DEFAULT_NOTICE_ANSWER_CHARS * 2
 * one-character chunks, in microseconds: about 0.1 s on the slowest machine
 * that runs these tests, against 2.7 s when each chunk had the whole answer
 * so far searched again for a line break.
 */
const ONE_CHARACTER_TURN_CPU_MICROS = 1_500_000;

describe("session notices", () => {
  let served: ServedFixture;
  let connection: ClientConnection;
  let sessionId: string;
  const notices: HubNotice[] = [];

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN] });
    served.server.hub.notices.onNotice((notice) => notices.push(notice));
    const stream = createWebSocketStream(`${served.server.url.replace(/^http/, "ws")}/acp`, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } });
    connection = client({ name: "session-notices-test" }).connect(stream);
    await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    ({ sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: served.dataDir, mcpServers: [] }));
  });
  after(async () => {
    connection?.close();
    await connection?.closed.catch(() => undefined);
    await served?.close();
  });

  /** One turn; the answer its `turn_ended` notice carried (told once the turn's answer is out). */
  async function turnAnswer(text: string): Promise<string | undefined> {
    const before = notices.length;
    await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    const ended = (): HubNotice | undefined => notices.slice(before).find((n) => n.kind === "turn_ended");
    const deadline = performance.now() + 10_000;
    while (ended() === undefined && performance.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    const notice = ended();
    assert.ok(notice?.kind === "turn_ended", "the turn's end is a notice");
    return notice.answer;
  }

  test("an answer of one long line streamed a character at a time costs the server linear time, and its notice carries the line up to the bound", async () => {
    const cpu = process.cpuUsage();
    const answer = await turnAnswer(`flood ${DEFAULT_NOTICE_ANSWER_CHARS * 2} 1`);
    const spent = process.cpuUsage(cpu);
    assert.equal(answer, "x".repeat(DEFAULT_NOTICE_ANSWER_CHARS));
    assert.ok(spent.user + spent.system < ONE_CHARACTER_TURN_CPU_MICROS, `the turn cost ${Math.round((spent.user + spent.system) / 1000)} ms of CPU`);
  });

  test("the first line with text is the answer, across chunks; what follows it is not kept", async () => {
    assert.equal(await turnAnswer("echo first\necho  part"), "first part");
    // The terminal's message is "exit: 0\nhi\n": its first line is whole, the next message is not kept.
    assert.equal(await turnAnswer("terminal echo hi\necho more"), "exit: 0");
    assert.equal(await turnAnswer("flood 3 2\necho more"), "xxxxxxmore");
  });
});
