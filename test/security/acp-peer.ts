// One remote client of the security tests: a real WebSocket on /acp that
// speaks JSON-RPC by hand, so that a test can send what a well-behaved client
// never would (an answer to a request it was not sent) and see every message
// the server sends, in order.
import WebSocket from "ws";
import { Acp } from "../../protocol/acp.ts";

export type Message = Record<string, unknown>;

/** How long a wait for a message may take before the test fails, in milliseconds. */
const WAIT_MS = 30_000;

export class AcpPeer {
  readonly received: Message[] = [];
  readonly #ws: WebSocket;
  #waiters: Array<() => void> = [];
  #nextId = 0;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data) => {
      this.received.push(JSON.parse(String(data)) as Message);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    ws.on("close", () => {
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** Opens /acp with `token` and initializes the connection. */
  static async open(baseUrl: string, token: string): Promise<AcpPeer> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/acp`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const peer = new AcpPeer(ws);
    const init = await peer.call(Acp.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    if (init["error"] !== undefined) throw new Error(`initialize failed: ${JSON.stringify(init["error"])}`);
    return peer;
  }

  send(message: Message): void {
    this.#ws.send(JSON.stringify(message));
  }

  /** Sends a request; resolves with its response (result or error). */
  call(method: string, params: unknown): Promise<Message> {
    const id = ++this.#nextId;
    this.send({ jsonrpc: "2.0", id, method, params });
    return this.waitFor((m) => m["id"] === id && !("method" in m), `the response to ${method}`);
  }

  /** Answers a request of the server with `result`. */
  answer(id: unknown, result: unknown): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  /** The first message received that passes `predicate`, waiting for it until the deadline. */
  async waitFor(predicate: (m: Message) => boolean, what: string): Promise<Message> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = this.received.find(predicate);
      if (found) return found;
      if (this.#ws.readyState !== WebSocket.OPEN) throw new Error(`the connection closed before ${what}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms; received ${JSON.stringify(this.received).slice(0, 2_000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The server's requests of one method, in order. */
  requests(method: string): Message[] {
    return this.received.filter((m) => m["method"] === method && "id" in m);
  }

  /** The text of the agent's message chunks of the session, in order. */
  texts(sessionId: string): string {
    return this.received
      .filter((m) => m["method"] === Acp.client.session.update)
      .map((m) => m["params"] as { sessionId: string; update: { sessionUpdate: string; content?: { text?: string } } })
      .filter((p) => p.sessionId === sessionId && p.update.sessionUpdate === "agent_message_chunk")
      .map((p) => p.update.content?.text ?? "")
      .join("");
  }

  close(): Promise<void> {
    if (this.#ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.#ws.once("close", () => resolve());
      this.#ws.close();
    });
  }
}
