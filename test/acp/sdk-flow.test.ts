// The official ACP client runs the spec's whole flow against the real
// sidecar (`serve()`: real hub, the fixture agent as a child process), over
// every way it can reach /acp: Streamable HTTP on HTTP/1.1 (global fetch), on
// h2c (undici's H2CClient, prior knowledge) and on h2 over TLS (undici with
// allowH2), and the WebSocket profile (`ws`, cleartext and TLS). Each profile: initialize,
// session/new, a prompt with streamed updates, a permission request answered
// by the client, cancel, a dropped connection, a reconnect whose session/load
// replays the history, and DELETE.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { ClientConnection, SessionNotification } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { Agent, fetch as undiciFetch, H2CClient } from "undici";
import type { Dispatcher } from "undici";
import WebSocket from "ws";
import { SELF_SIGNED_CERT_FILE } from "../../sidecar/http/tls.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { recordingClient, texts } from "../cluster/sdk-client.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import type { TcpProxy } from "../helpers/tcp-proxy.ts";
import { eventually } from "../helpers/eventually.ts";

const TOKEN = "sdk-flow-token-0123456789";

type Stream = ReturnType<typeof createHttpStream>;

interface Profile {
  name: string;
  tls: boolean;
  /** The transport profile the hub reports for these connections. */
  hubProfile: string;
  stream(baseUrl: string, ca: string | undefined): { stream: Stream; close(): Promise<void> };
}

/** A fetch for the SDK client that goes through an undici dispatcher. */
function fetchThrough(dispatcher: Dispatcher): typeof globalThis.fetch {
  return ((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as string, { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1])) as unknown as typeof globalThis.fetch;
}

/**
 * DELETEs the SDK client sends, settled or not. On a network error the client
 * tries a parting DELETE; a test of a real drop waits for it to fail before
 * the network comes back.
 */
const deletes: Promise<unknown>[] = [];

function recording(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const response = fetch(input, init);
    if (init?.method === "DELETE") deletes.push(response.catch(() => undefined));
    return response;
  }) as typeof globalThis.fetch;
}

/** Streamable HTTP through an undici dispatcher, which goes with the client. */
function streamThrough(baseUrl: string, dispatcher: Dispatcher): ReturnType<Profile["stream"]> {
  return {
    stream: createHttpStream(`${baseUrl}/acp`, { headers: { authorization: `Bearer ${TOKEN}` }, fetch: recording(fetchThrough(dispatcher)) }),
    close: () => dispatcher.destroy(),
  };
}

const PROFILES: Profile[] = [
  {
    name: "Streamable HTTP on HTTP/1.1 (global fetch)",
    tls: false,
    hubProfile: "http1",
    stream: (baseUrl) => ({
      stream: createHttpStream(`${baseUrl}/acp`, { headers: { authorization: `Bearer ${TOKEN}` }, fetch: recording(globalThis.fetch) }),
      close: async () => {},
    }),
  },
  {
    name: "Streamable HTTP on h2c (undici H2CClient, prior knowledge)",
    tls: false,
    hubProfile: "http2",
    stream: (baseUrl) => streamThrough(baseUrl, new H2CClient(baseUrl, { pipelining: 100 })),
  },
  {
    name: "Streamable HTTP on h2 over TLS (undici allowH2)",
    tls: true,
    hubProfile: "http2",
    stream: (baseUrl, ca) => streamThrough(baseUrl, new Agent({ allowH2: true, connect: { ca: ca ?? "" } })),
  },
  {
    name: "WebSocket over TLS (wss), token as the subprotocol as a browser sends it",
    tls: true,
    hubProfile: "websocket",
    stream: (baseUrl, ca) => {
      // The SDK passes (url, protocols, { headers }); this constructor adds the CA to trust.
      class TrustingWebSocket extends WebSocket {
        constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
          super(url, protocols, { ...options, ...(ca !== undefined ? { ca } : {}) });
        }
      }
      return {
        stream: createWebSocketStream(`${baseUrl.replace(/^http/, "ws")}/acp`, {
          WebSocket: TrustingWebSocket,
          protocols: [`acp.bearer.${TOKEN}`],
        }) as Stream,
        close: async () => {},
      };
    },
  },
  {
    name: "WebSocket (ws)",
    tls: false,
    hubProfile: "websocket",
    stream: (baseUrl) => ({
      stream: createWebSocketStream(`${baseUrl.replace(/^http/, "ws")}/acp`, {
        WebSocket,
        headers: { authorization: `Bearer ${TOKEN}` },
      }) as Stream,
      close: async () => {},
    }),
  },
];

/** One SDK client connection and what it saw. */
interface Client {
  connection: ClientConnection;
  updates: SessionNotification[];
  permissions: string[];
  close(): Promise<void>;
}

function connectClient(profile: Profile, baseUrl: string, ca: string | undefined): Client {
  const { app, updates, permissions } = recordingClient("sdk-flow-test");
  const { stream, close } = profile.stream(baseUrl, ca);
  const connection = app.connect(stream);
  return {
    connection,
    updates,
    permissions,
    close: async () => {
      connection.close();
      await connection.closed.catch(() => {});
      // The SDK's close sends DELETE after the connection reports closed; let it finish before the dispatcher goes.
      await Promise.all(deletes);
      await close();
    },
  };
}

for (const profile of PROFILES) {
  describe(`SDK client, full flow: ${profile.name}`, () => {
    let server: RunningServer;
    let proxy: TcpProxy;
    let dataDir: string;
    let ca: string | undefined;
    let baseUrl: string;
    let first: Client;
    let sessionId: string;
    const clients: Client[] = [];

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "acp-sdk-flow-"));
      server = await serveFixtureAgent({ tokens: [TOKEN], dataDir, ...(profile.tls ? { tls: "self-signed" as const } : {}) });
      ca = profile.tls ? readFileSync(join(dataDir, SELF_SIGNED_CERT_FILE), "utf8") : undefined;
      // Through a proxy, so the test can drop the network under the client.
      proxy = await startTcpProxy(server.port);
      baseUrl = `${profile.tls ? "https://localhost" : "http://127.0.0.1"}:${proxy.port}`;
    });

    after(async () => {
      for (const c of clients) await c.close().catch(() => {});
      await proxy.close();
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("1-3. initialize (connectionId in the result), then session/new", async () => {
      first = connectClient(profile, baseUrl, ca);
      clients.push(first);
      const init = await first.connection.agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      assert.equal(init.protocolVersion, PROTOCOL_VERSION);
      assert.equal(init.agentCapabilities?.loadSession, true);
      assert.equal(typeof (init as { connectionId?: unknown }).connectionId, "string", "the result carries connectionId");
      const created = await first.connection.agent.request(methods.agent.session.new, { cwd: dataDir, mcpServers: [] });
      sessionId = created.sessionId;
      const connections = server.hub.status().connections;
      assert.equal(connections.length, 1);
      assert.equal(connections[0]?.profile, profile.hubProfile, "the connection runs on the expected HTTP version");
    });

    it("5. session/prompt: the updates stream in, then the response", async () => {
      const response = await first.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "echo hello\nthink pondering\ntool read Reading a file" }],
      });
      assert.equal(response.stopReason, "end_turn");
      assert.deepEqual(texts(first.updates, "agent_message_chunk"), ["hello"]);
      assert.deepEqual(texts(first.updates, "agent_thought_chunk"), ["pondering"]);
      assert.ok(first.updates.some((n) => n.update.sessionUpdate === "tool_call"));
      assert.ok(first.updates.every((n) => n.sessionId === sessionId));
    });

    it("6. request_permission arrives on the session stream; the client's answer reaches the agent", async () => {
      const response = await first.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "permission Edit main.ts" }],
      });
      assert.equal(response.stopReason, "end_turn");
      assert.deepEqual(first.permissions, ["Edit main.ts"]);
      assert.ok(texts(first.updates, "agent_message_chunk").includes("outcome: selected allow_once"));
    });

    it("7. session/cancel ends the prompt turn; its response says cancelled", async () => {
      const turn = first.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "slow 60000" }],
      });
      await first.connection.agent.notify(methods.agent.session.cancel, { sessionId });
      assert.equal((await turn).stopReason, "cancelled");
    });

    it("drop: the network fails under the client; the server detaches the connection", async () => {
      // Block new connections too, so the client's parting DELETE cannot get through either.
      deletes.length = 0;
      proxy.block();
      proxy.cut();
      await first.connection.closed.catch(() => {});
      if (profile.hubProfile !== "websocket") {
        await eventually("the client's parting DELETE", () => deletes.length > 0);
        await Promise.all(deletes);
      }
      proxy.unblock();
      if (profile.hubProfile === "websocket") {
        // A dropped WebSocket detaches at once.
        await eventually("the connection to detach", () => server.hub.status().connections.length === 0);
      }
      const session = server.hub.status().sessions.find((s) => s.sessionId === sessionId);
      assert.ok(session !== undefined, "the session outlives its connection");
    });

    it("8. reconnect: initialize on a new connection, session/load replays the history", async () => {
      const second = connectClient(profile, baseUrl, ca);
      clients.push(second);
      const init = await second.connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const connectionId = (init as { connectionId?: string }).connectionId;
      await second.connection.agent.request(methods.agent.session.load, { sessionId, cwd: dataDir, mcpServers: [] });
      // The replay travels on the session stream, the load's response on the
      // connection stream: two HTTP/2 streams are not ordered between them.
      await eventually("the replay of the first prompt", () => texts(second.updates, "user_message_chunk").some((t) => t.includes("echo hello")));
      assert.ok(texts(second.updates, "agent_message_chunk").includes("hello"), "the agent's answer is replayed");
      // The session works on the new connection.
      const response = await second.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "echo again" }],
      });
      assert.equal(response.stopReason, "end_turn");
      assert.ok(texts(second.updates, "agent_message_chunk").includes("again"));

      // DELETE (the SDK's close) ends the connection and its sessions for good.
      await second.close();
      if (profile.hubProfile !== "websocket") {
        await eventually("the session to end", () => !server.hub.status().sessions.some((s) => s.sessionId === sessionId));
      }
      await eventually("the connection to be gone", () => !server.hub.status().connections.some((c) => c.connectionId === connectionId));
    });
  });
}
