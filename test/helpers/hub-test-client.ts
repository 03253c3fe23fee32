// A stand-in for the remote transport in hub tests: a ClientLink that records
// every delivery with the session it belongs to (the transport picks the
// stream from it) and what each response answers, and lets a test wait for one.
import assert from "node:assert/strict";
import type { JsonRpcMessage, JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import type { AgentHub } from "../../sidecar/hub/hub.ts";
import type { ClientLink, HubConnection, Principal } from "../../sidecar/hub/types.ts";

export interface Delivered {
  message: JsonRpcMessage;
  /** The session the hub says it belongs to (the transport picks the stream from it); undefined for none. */
  stream: string | undefined;
  /** For a response: the method of the request it answers. */
  answers: string | undefined;
}

/** A ClientLink that records deliveries and lets the test wait for one. */
export class TestClient implements ClientLink {
  readonly connectionId: string;
  readonly principal: Principal;
  readonly profile = "test";
  readonly delivered: Delivered[] = [];
  connection!: HubConnection;
  #waiters: Array<() => void> = [];
  #nextId = 0;
  static #count = 0;

  constructor(principal: Principal) {
    this.principal = principal;
    this.connectionId = `test-${++TestClient.#count}`;
  }

  send(message: JsonRpcMessage, sessionId?: string, answers?: string): void {
    this.delivered.push({ message, stream: sessionId, answers });
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async waitFor(predicate: (d: Delivered) => boolean, timeoutMs = 20_000): Promise<Delivered> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.delivered.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; delivered: ${JSON.stringify(this.delivered.map((d) => d.message)).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a request and waits for its response. */
  async request(method: string, params: unknown): Promise<{ response: JsonRpcResponse; stream: string | undefined; answers: string | undefined }> {
    const id = ++this.#nextId;
    this.connection.receive({ jsonrpc: "2.0", id, method, params });
    const d = await this.waitFor((x) => !("method" in x.message) && (x.message as JsonRpcResponse).id === id);
    return { response: d.message as JsonRpcResponse, stream: d.stream, answers: d.answers };
  }

  /** Sends a request and resolves with its response alone. */
  async call(method: string, params: unknown): Promise<JsonRpcResponse> {
    return (await this.request(method, params)).response;
  }

  updates(sessionId: string): Array<Record<string, unknown>> {
    return this.delivered
      .filter((d) => "method" in d.message && d.message.method === "session/update" && d.stream === sessionId)
      .map((d) => ((d.message as { params: { update: Record<string, unknown> } }).params.update));
  }

  texts(sessionId: string, kind = "agent_message_chunk"): string {
    return this.updates(sessionId)
      .filter((u) => u["sessionUpdate"] === kind)
      .map((u) => (u["content"] as { text: string }).text)
      .join("");
  }
}

export async function open(hub: AgentHub, principal: Principal): Promise<TestClient> {
  const client = new TestClient(principal);
  client.connection = hub.connect(client);
  const init = await client.connection.initialize({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  assert.equal(init.error, undefined, JSON.stringify(init.error));
  return client;
}

export async function newSession(client: TestClient, cwd: string): Promise<string> {
  const { response, stream } = await client.request("session/new", { cwd, mcpServers: [] });
  assert.equal(stream, undefined, "the session/new response belongs to no session yet");
  const sessionId = (response.result as { sessionId: string }).sessionId;
  assert.equal(typeof sessionId, "string");
  return sessionId;
}

/** Resolves once the hub's status passes `check` (checked now and on each change); fails after `timeoutMs`. */
export function untilStatus(hub: AgentHub, check: (status: ReturnType<AgentHub["status"]>) => boolean, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      unsubscribe();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => done(new Error(`hub status not reached within ${timeoutMs} ms: ${JSON.stringify(hub.status().sessions)}`)), timeoutMs);
    const unsubscribe = hub.onChange(() => {
      if (check(hub.status())) done();
    });
    if (check(hub.status())) done();
  });
}

export const prompt = (sessionId: string, text: string) => ({ sessionId, prompt: [{ type: "text", text }] });
