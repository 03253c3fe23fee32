// A plain ACP client over the WebSocket profile for tests that must decide
// themselves what to answer (or not to answer) to the server's requests: it
// keeps every message it got, sends requests and notifications, and lets a
// test wait for a message with a deadline. The token rides as the
// subprotocol, as the web client sends it.
import WebSocket from "ws";
import { Acp, PROTOCOL_VERSION, WS_TOKEN_SUBPROTOCOL_PREFIX } from "../../protocol/acp.ts";

export type Message = Record<string, unknown>;

/** A JSON-RPC error answer, as a rejection. */
export class PeerRpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export class AcpPeer {
  readonly received: Message[] = [];
  readonly #ws: WebSocket;
  readonly #waiters = new Set<() => void>();
  #next = 0;
  initialized: Message | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data) => {
      this.received.push(JSON.parse(String(data)) as Message);
      for (const wake of [...this.#waiters]) wake();
    });
    // A wait for what can no longer come ends now, not at its deadline.
    ws.on("close", () => {
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Opens `/acp` of `baseUrl` (http: or https:) and initializes. */
  static async open(baseUrl: string, token: string, options: { agent?: string; ca?: string } = {}): Promise<AcpPeer> {
    const url = new URL("/acp", baseUrl.replace(/^http/, "ws"));
    if (options.agent !== undefined) url.searchParams.set("agent", options.agent);
    const ws = new WebSocket(url, [`${WS_TOKEN_SUBPROTOCOL_PREFIX}${token}`], options.ca === undefined ? {} : { ca: options.ca });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
    });
    const peer = new AcpPeer(ws);
    peer.initialized = (await peer.request(Acp.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} })) as Message;
    return peer;
  }

  /** Sends a request; resolves with its result, rejects with PeerRpcError. */
  async request(method: string, params: unknown, deadlineMs = 20_000): Promise<unknown> {
    const answer = await this.call(method, params, deadlineMs);
    const error = answer["error"] as { code: number; message: string } | undefined;
    if (error !== undefined) throw new PeerRpcError(error.code, error.message);
    return answer["result"];
  }

  /** Sends a request; resolves with its whole response, result or error. */
  call(method: string, params: unknown, deadlineMs = 20_000): Promise<Message> {
    const id = `peer-${++this.#next}`;
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return this.waitFor((m) => m["id"] === id && !("method" in m), `the answer to ${method}`, deadlineMs);
  }

  notify(method: string, params: unknown): void {
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /** Answers a request the server sent. */
  respond(id: unknown, result: unknown): void {
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id, result }));
  }

  /** The first message (kept so far or to come) that matches, within `deadlineMs`. */
  waitFor(match: (message: Message) => boolean, what: string, deadlineMs = 20_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.received.find(match);
        if (found === undefined) {
          if (this.#ws.readyState !== WebSocket.CLOSED) return false;
          this.#waiters.delete(wake);
          clearTimeout(timer);
          reject(new Error(`the connection closed before ${what}`));
          return true;
        }
        this.#waiters.delete(wake);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new Error(`no ${what} within ${deadlineMs} ms`));
      }, deadlineMs);
      this.#waiters.add(wake);
      check();
    });
  }

  /** The text of the agent_message_chunks of a session so far. */
  agentText(sessionId: string): string {
    return this.received
      .filter((m) => m["method"] === Acp.client.session.update && (m["params"] as Message)["sessionId"] === sessionId)
      .map((m) => (m["params"] as { update: { sessionUpdate: string; content?: { text?: string } } }).update)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content?.text ?? "")
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
