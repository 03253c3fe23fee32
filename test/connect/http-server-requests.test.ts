// What the Streamable HTTP client remembers of the server's requests (the
// session whose stream carried each, for the answer's Acp-Session-Id), against
// a scripted HTTP/2 server: nothing is kept for the connection's life.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { HttpTransport } from "../../client/http-transport.ts";
import { DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT } from "../../client/limits.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";
import { startScriptedH2 } from "../helpers/scripted-h2-server.ts";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } } as const;

/** A server whose connection stream carries `events`; POSTs of answers get `answerStatus` and are recorded with their Acp-Session-Id. */
async function scripted(events: string, answerStatus: number, posted: string[]): Promise<string> {
  const server = await startScriptedH2((req, res) => {
    if (req.method === "POST") {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        const message = JSON.parse(body) as { method?: string };
        if (message.method === "initialize") {
          res.writeHead(200, { "content-type": "application/json", "acp-connection-id": "conn-1" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1 } }));
          return;
        }
        posted.push(`${String(req.headers["acp-session-id"])} ${body}`);
        res.writeHead(answerStatus, { "content-type": "application/json" });
        res.end(answerStatus === 202 ? "" : JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "refused" } }));
      });
      return;
    }
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      // The connection stream carries the script; session streams stay quiet.
      if (req.headers["acp-session-id"] === undefined) res.write(events);
      return;
    }
    res.writeHead(202);
    res.end();
  });
  cleanups.push(() => server.close());
  return server.acpUrl;
}

function event(message: unknown): string {
  return `data: ${JSON.stringify(message)}\n\n`;
}

/** Connects and waits until the message `last` has come through the connection stream. */
async function connect(url: string, last: string): Promise<HttpTransport> {
  const t = new HttpTransport(url);
  cleanups.push(() => t.close());
  let seen: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    seen = resolve;
  });
  t.onmessage = (m: JsonRpcMessage) => {
    if ("method" in m && m.method === last) seen();
  };
  t.onerror = () => {};
  await t.send(INITIALIZE);
  await arrived;
  return t;
}

test("regression: server requests withdrawn with $/cancel_request stayed in memory for the connection's life", async () => {
  const count = DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT + 200;
  let events = "";
  for (let id = 1; id <= count; id++) events += event({ jsonrpc: "2.0", id, method: "session/request_permission", params: { sessionId: "s1" } });
  for (let id = 1; id <= count; id++) events += event({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  events += event({ jsonrpc: "2.0", method: "x/done" });
  const t = await connect(await scripted(events, 202, []), "x/done");
  assert.equal(t.serverRequestsKept, DEFAULT_CLIENT_WITHDRAWN_REQUESTS_KEPT, "only the latest withdrawn requests are kept, for a late answer");
});

test("a late answer to a recently withdrawn request still goes with its Acp-Session-Id, and is forgotten", async () => {
  const events =
    event({ jsonrpc: "2.0", id: 7, method: "session/request_permission", params: { sessionId: "s1" } }) +
    event({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 7 } }) +
    event({ jsonrpc: "2.0", method: "x/done" });
  const posted: string[] = [];
  const t = await connect(await scripted(events, 202, posted), "x/done");
  await t.send({ jsonrpc: "2.0", id: 7, error: { code: -32800, message: "cancelled" } });
  assert.equal(posted.length, 1);
  assert.match(posted[0] ?? "", /^s1 /);
  assert.equal(t.serverRequestsKept, 0);
});

test("regression: an answer the server refused (non-2xx) kept its request in memory", async () => {
  const events = event({ jsonrpc: "2.0", id: 3, method: "session/request_permission", params: { sessionId: "s1" } }) + event({ jsonrpc: "2.0", method: "x/done" });
  const posted: string[] = [];
  const t = await connect(await scripted(events, 400, posted), "x/done");
  assert.equal(t.serverRequestsKept, 1);
  await t.send({ jsonrpc: "2.0", id: 3, result: { outcome: { outcome: "cancelled" } } });
  assert.equal(posted.length, 1);
  assert.equal(t.serverRequestsKept, 0);
});
