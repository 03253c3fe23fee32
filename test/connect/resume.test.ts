// `connect` resumes a cut SSE stream with Last-Event-ID when the server offers
// it (acp-remote serve does): the editor sees every update of the turn once,
// in order, and the connection goes on without a reconnect or a
// session/load. A server that cannot resume (the connection is gone) gets
// the reconnect and session/load of reconnect.test.ts. The sidecar runs with
// its fixture agent behind a proxy that speaks only HTTP/1.1, so each stream
// is a socket of its own that the proxy can cut alone.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { methods, PROTOCOL_VERSION, type ClientContext } from "@agentclientprotocol/sdk";
import { asEditor, spawnConnect, waitFor, type EditorLog } from "../helpers/connect-child.ts";
import { startSidecar } from "../helpers/sidecar-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const FIRST = 60;
const SECOND = 40;
const CUT_AFTER = 20;
/** FIRST numbered chunks at once (the cut lands among them), a pause while the stream is away, SECOND more. */
const TURN = [...Array.from({ length: FIRST }, (_, i) => `echo u${i + 1}`), "slow 400", ...Array.from({ length: SECOND }, (_, i) => `echo u${FIRST + i + 1}`)].join("\n");

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function texts(log: EditorLog, sessionId: string): string[] {
  return log.updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => (u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text" ? u.update.content.text : ""));
}

async function openSession(ctx: ClientContext): Promise<string> {
  await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  return sessionId;
}

const isSessionStreamGet = (head: string): boolean => head.startsWith("GET ") && /\r\nacp-session-id:/i.test(head);
const isConnectionStreamGet = (head: string): boolean => head.startsWith("GET ") && !/\r\nacp-session-id:/i.test(head) && /\r\nacp-connection-id:/i.test(head);

describe("connect resumes cut streams with Last-Event-ID", () => {
  for (const [which, match] of [
    ["session stream", isSessionStreamGet],
    ["connection stream", isConnectionStreamGet],
  ] as const) {
    test(`the ${which} cut mid-turn: every update once, in order, no reconnect`, { timeout: 60_000 }, async () => {
      const server = await startSidecar();
      const proxy = await startTcpProxy(server.port, "127.0.0.1", { http1Only: true });
      const c = spawnConnect([`http://127.0.0.1:${proxy.port}/acp`, "--transport", "http"], { ACP_REMOTE_TOKEN: TOKEN });
      cleanups.push(() => server.close(), () => proxy.close(), () => c.kill());
      const log: EditorLog = { updates: [], permissions: [] };
      await asEditor(c, log, async (ctx) => {
        const sessionId = await openSession(ctx);
        const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: TURN }] });
        await waitFor(() => texts(log, sessionId).length >= CUT_AFTER, `${CUT_AFTER} updates`);
        assert.equal(proxy.cutWhere(match), 1, `one ${which} socket cut`);
        assert.equal((await turn).stopReason, "end_turn", "the turn's response arrives");
        assert.deepEqual(texts(log, sessionId), Array.from({ length: FIRST + SECOND }, (_, i) => `u${i + 1}`));
        // The connection lives on: another turn on the same session.
        const next = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo after" }] });
        assert.equal(next.stopReason, "end_turn");
        assert.equal(texts(log, sessionId).at(-1), "after");
      });
      assert.equal(await c.exited, 0);
      assert.doesNotMatch(c.stderr(), /reconnecting/, "resumed, not reconnected");
    });
  }
});
