// SIGTERM drains a real `acp-remote serve` child: the port stops accepting at
// once and /readyz answers 503 "draining" on a connection opened before, the
// prompt turn that runs goes on over its own connection until it ends, then
// the server closes and exits 0. A second signal during the drain stops at
// once; SIGINT never drains. drain() itself is bounded by its timeout.
import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import { afterEach, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { serveFixture } from "../helpers/sidecar-server.ts";
import { spawnServe, type ServeChild } from "../helpers/serve-child.ts";
import { connectSdkClient, texts, type SdkClient } from "../cluster/sdk-client.ts";
import { eventually } from "../helpers/eventually.ts";

const TOKEN = "drain-test-token-0123456789";

/** GET on an HTTP/2 session that is already open: status and parsed body. */
function getOn(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "GET", ":path": path });
    let status = 0;
    let body = "";
    stream.setEncoding("utf8");
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => resolve({ status, body: JSON.parse(body) as Record<string, unknown> }));
    stream.on("error", reject);
  });
}

function exitOf(child: ServeChild): Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }> {
  if (child.child.exitCode !== null || child.child.signalCode !== null) {
    return Promise.resolve({ code: child.child.exitCode, signal: child.child.signalCode, at: Date.now() });
  }
  return once(child.child, "exit").then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, at: Date.now() }));
}

describe("SIGTERM drains acp-remote serve", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  /** A served child, an SDK client on h2c with a session, and an HTTP/2 session opened before any signal. */
  async function setUp(): Promise<{ server: ServeChild; sdk: SdkClient; sessionId: string; probe: http2.ClientHttp2Session }> {
    const server = await spawnServe({ token: TOKEN });
    cleanups.push(() => server.close());
    const sdk = connectSdkClient({ baseUrl: server.url, token: TOKEN, transport: "h2c" });
    cleanups.push(() => sdk.close());
    await sdk.initialize();
    const { sessionId } = await sdk.connection.agent.request(methods.agent.session.new, { cwd: server.dataDir, mcpServers: [] });
    const probe = http2.connect(server.url);
    probe.on("error", () => {});
    cleanups.push(async () => void probe.destroy());
    assert.equal((await getOn(probe, "/readyz")).status, 200);
    return { server, sdk, sessionId, probe };
  }

  it("the running turn ends, /readyz says draining meanwhile, new connections are refused, then the process exits 0", async () => {
    const { server, sdk, sessionId, probe } = await setUp();
    let turnEndedAt = 0;
    const turn = sdk.connection.agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 1500\necho done" }] })
      .then((response) => ((turnEndedAt = Date.now()), response));
    await eventually("the turn to start", () => texts(sdk.updates, "agent_message_chunk").includes("started"));
    const exited = exitOf(server);
    server.child.kill("SIGTERM");
    // The line comes once the drain began; the signal itself arrives when the kernel delivers it.
    await eventually("the drain to begin", () => server.stderr().includes("SIGTERM, draining"));
    const ready = await getOn(probe, "/readyz");
    assert.equal(ready.status, 503, "from the first moment of the drain");
    assert.deepEqual(ready.body, { status: "unavailable", reason: "draining" });
    assert.equal((await getOn(probe, "/healthz")).status, 200, "alive while it drains");
    const refused = http2.connect(server.url);
    const [error] = (await once(refused, "error")) as [NodeJS.ErrnoException];
    assert.equal(error.code, "ECONNREFUSED", "the port no longer accepts");
    refused.destroy();

    const response = await turn;
    assert.equal(response.stopReason, "end_turn");
    assert.deepEqual(texts(sdk.updates, "agent_message_chunk"), ["started", "done"], "the turn streamed to its end");
    const { code, signal, at } = await exited;
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.ok(at >= turnEndedAt, "the process exits after the turn ended");
    assert.match(server.stderr(), /SIGTERM, draining/);
    assert.match(server.stderr(), /no turn runs, stopping/);
  });

  it("with no turn running, SIGTERM stops at once and exits 0", async () => {
    const { server } = await setUp();
    const exited = exitOf(server);
    server.child.kill("SIGTERM");
    const { code } = await exited;
    assert.equal(code, 0);
    assert.match(server.stderr(), /no turn runs, stopping/);
  });

  for (const second of ["SIGTERM", "SIGINT"] as const) {
    it(`a second signal (${second}) during the drain stops at once: the long turn does not hold the exit, which is 0`, async () => {
      const { server, sdk, sessionId, probe } = await setUp();
      const turn = sdk.connection.agent
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 600000" }] })
        .then(
          () => "answered",
          () => "failed",
        );
      await eventually("the turn to start", () => texts(sdk.updates, "agent_message_chunk").includes("started"));
      const exited = exitOf(server);
      const signalledAt = Date.now();
      server.child.kill("SIGTERM");
      await eventually("the drain to begin", () => server.stderr().includes("SIGTERM, draining"));
      assert.equal((await getOn(probe, "/readyz")).status, 503, "the drain began");
      server.child.kill(second);
      const { code, at } = await exited;
      assert.equal(code, 0);
      assert.ok(at - signalledAt < 15_000, `exited ${at - signalledAt} ms after the signals, not after the 10-minute turn`);
      assert.match(server.stderr(), new RegExp(`${second} during the drain, stopping now`));
      // The turn did not end on its own: the client sees its connection go.
      await sdk.connection.closed.catch(() => {});
      void turn;
    });
  }

  it("SIGINT does not drain: a running turn does not hold the exit", async () => {
    const { server, sdk, sessionId } = await setUp();
    void sdk.connection.agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 600000" }] })
      .catch(() => undefined);
    await eventually("the turn to start", () => texts(sdk.updates, "agent_message_chunk").includes("started"));
    const exited = exitOf(server);
    const signalledAt = Date.now();
    server.child.kill("SIGINT");
    const { code, at } = await exited;
    assert.equal(code, 0);
    assert.ok(at - signalledAt < 15_000, `exited ${at - signalledAt} ms after SIGINT`);
    assert.doesNotMatch(server.stderr(), /draining/);
  });
});

describe("RunningServer.drain()", () => {
  it("regression: a drain over TLS no longer closes the open HTTP/2 connections (GOAWAY refused their next request)", async () => {
    const { server, ca, close } = await serveFixture({ tokens: [TOKEN], tls: true });
    const open = http2.connect(server.url, { ca });
    open.on("error", () => {});
    try {
      assert.equal((await getOn(open, "/readyz")).status, 200);
      const drained = server.drain();
      // Still open: the turns a drain waits for need their connection for the client's answers.
      assert.equal((await getOn(open, "/readyz")).status, 503);
      assert.equal((await getOn(open, "/healthz")).status, 200);
      assert.equal(open.closed, false);
      assert.equal(await drained, true);
    } finally {
      open.destroy();
      await close();
    }
  });


  it("gives up after its timeout while a turn still runs (false); the turn goes on; a second call is the same drain", async () => {
    const { server, dataDir, close } = await serveFixture({ tokens: [TOKEN] });
    const sdk = connectSdkClient({ baseUrl: server.url, token: TOKEN, transport: "h2c" });
    try {
      await sdk.initialize();
      const { sessionId } = await sdk.connection.agent.request(methods.agent.session.new, { cwd: dataDir, mcpServers: [] });
      const turn = sdk.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 600000" }] });
      await eventually("the turn to start", () => texts(sdk.updates, "agent_message_chunk").includes("started"));
      const startedAt = Date.now();
      assert.equal(await server.drain(200), false, "the turn still runs when the time is up");
      assert.ok(Date.now() - startedAt < 5_000);
      // The drain is one: asking again gives the same answer, and the turn still runs on its connection.
      assert.equal(await server.drain(), false);
      await sdk.connection.agent.notify(methods.agent.session.cancel, { sessionId });
      assert.equal((await turn).stopReason, "cancelled");
      await server.hub.idle();
    } finally {
      await sdk.close();
      await close();
    }
  });

  it("hub.idle() waits for a running turn and resolves when it ends", async () => {
    const { server, dataDir, close } = await serveFixture({ tokens: [TOKEN] });
    const sdk = connectSdkClient({ baseUrl: server.url, token: TOKEN, transport: "h2c" });
    try {
      await server.hub.idle();
      await sdk.initialize();
      const { sessionId } = await sdk.connection.agent.request(methods.agent.session.new, { cwd: dataDir, mcpServers: [] });
      let turnEnded = false;
      const turn = sdk.connection.agent
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo started\nslow 500" }] })
        .then(() => (turnEnded = true));
      await eventually("the turn to start", () => texts(sdk.updates, "agent_message_chunk").includes("started"));
      const running = (): boolean | undefined => server.hub.status().sessions.find((s) => s.sessionId === sessionId)?.running;
      assert.equal(running(), true);
      const startedAt = Date.now();
      await server.hub.idle();
      assert.equal(running(), false, "idle only once the turn ended");
      assert.ok(Date.now() - startedAt >= 300, "the turn's 500 ms pause was waited for");
      await eventually("the prompt's answer", () => turnEnded);
      await turn;
      await server.hub.idle();
    } finally {
      await sdk.close();
      await close();
    }
  });
});
