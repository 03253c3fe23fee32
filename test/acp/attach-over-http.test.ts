// `session/attach` over Streamable HTTP, as docs/transport.md lists it for
// any follower: a second connection joins a session another connection
// follows, over h2c and over HTTP/1.1 (through a proxy that speaks only
// that), and gets the session's updates whoever prompts. The real sidecar
// with its fixture agent; the client library's HttpTransport as the clients.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { HttpTransport } from "../../client/index.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { startSidecar } from "../helpers/sidecar-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { TOKEN } from "../helpers/transport-server.ts";
import { watchTransport } from "../helpers/transport-watch.ts";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } } as const;

const answerTo = (id: number) => (m: JsonRpcMessage) => "id" in m && m.id === id && !("method" in m);
const chunkSaying = (text: string) => (m: JsonRpcMessage) =>
  "method" in m && m.method === "session/update" && JSON.stringify(m.params).includes(`"agent_message_chunk"`) && JSON.stringify(m.params).includes(`"text":"${text}"`);

describe("session/attach over Streamable HTTP", () => {
  for (const http1 of [false, true]) {
    const profile = http1 ? "HTTP/1.1" : "h2c";
    test(`regression: session/attach over Streamable HTTP (${profile}) answered 409 "not attached"; a second connection attaches and follows the session`, async () => {
      const server = await startSidecar();
      cleanups.push(() => server.close());
      let url = server.acpUrl;
      if (http1) {
        const proxy = await startTcpProxy(server.port, "127.0.0.1", { http1Only: true });
        cleanups.push(() => proxy.close());
        url = `http://127.0.0.1:${proxy.port}/acp`;
      }
      const first = new HttpTransport(url, { token: TOKEN });
      const second = new HttpTransport(url, { token: TOKEN });
      cleanups.push(() => first.close(), () => second.close());
      const a = watchTransport(first);
      const b = watchTransport(second);
      await first.send(INITIALIZE);
      await a.next(answerTo(0), "initialize answer");
      await first.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } });
      const created = (await a.next(answerTo(1), "session/new answer")) as { result: { sessionId: string } };
      const sessionId = created.result.sessionId;

      await second.send(INITIALIZE);
      await b.next(answerTo(0), "initialize answer");
      assert.equal(second.protocol, http1 ? "http/1.1" : "h2");
      await second.send({ jsonrpc: "2.0", id: 1, method: "session/attach", params: { sessionId, historyPolicy: "none" } });
      const attached = (await b.next(answerTo(1), "session/attach answer")) as { result?: { clientId: string }; error?: { message: string } };
      assert.equal(attached.error, undefined, JSON.stringify(attached.error));
      assert.equal(typeof attached.result?.clientId, "string");

      // The first connection prompts; the attached one sees the agent's text.
      await first.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "echo seen-by-both" }] } });
      await a.next(answerTo(2), "prompt answer");
      await b.next(chunkSaying("seen-by-both"), "the attached connection's update");
      // And it may prompt the session itself.
      await second.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "echo from-the-second" }] } });
      const answered = (await b.next(answerTo(3), "the attached connection's prompt answer")) as { result?: { stopReason: string } };
      assert.equal(answered.result?.stopReason, "end_turn");
      await a.next(chunkSaying("from-the-second"), "the first connection's update");
    });
  }
});
