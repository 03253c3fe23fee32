// A small Hub for transport-level tests: it keeps sessions per principal and
// answers the few methods the transport's rules are about, so that the HTTP
// machinery can be tested row by row without agent processes. The full flow
// (real hub, real agent) is tested through `serve()`.
import { EventEmitter } from "node:events";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { StatusSnapshot } from "../../protocol/control.ts";
import type { ClientLink, ConnectionHub, ConnectOptions, HubConnection, SessionAccess } from "../../sidecar/hub/types.ts";
import { UnknownAgentError } from "../../sidecar/hub/types.ts";
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../protocol/jsonrpc.ts";
import { ErrorCode, errorResponse, isRequest, isResponse, paramsSessionId } from "../../protocol/jsonrpc.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";

export const TEST_AGENT = "echo";

interface Session {
  id: string;
  createdAt: number;
  principal: string;
  connection: TransportHubConnection | undefined;
  history: string[];
  ended: boolean;
}

/** What the tests can observe about the hub. */
export interface TransportHubEvents {
  received: { connectionId: string; message: JsonRpcMessage }[];
  detached: string[];
  closed: string[];
}

class TransportHubConnection implements HubConnection {
  readonly #hub: TransportHub;
  readonly link: ClientLink;
  readonly connectedAt = Date.now();
  /** Permission requests waiting for the client's answer, by id. */
  readonly #permissions = new Map<string, (response: JsonRpcResponse) => void>();
  #nextPermission = 0;

  constructor(hub: TransportHub, link: ClientLink) {
    this.#hub = hub;
    this.link = link;
  }

  async initialize(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    // A test can hold initialize, as a slow agent start does.
    await this.#hub.initializeGate;
    return {
      jsonrpc: "2.0",
      id: request.id,
      result: { protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: true }, authMethods: [] },
    };
  }

  receive(message: JsonRpcMessage): void {
    this.#hub.events.received.push({ connectionId: this.link.connectionId, message });
    if (isResponse(message)) {
      const key = String(message.id);
      this.#permissions.get(key)?.(message);
      this.#permissions.delete(key);
      return;
    }
    if (!isRequest(message)) {
      // session/cancel: the prompt it ends answers on the session stream.
      return;
    }
    const sessionId = paramsSessionId(message);
    switch (message.method) {
      case Acp.agent.session.new: {
        const session = this.#hub.newSession(this);
        this.link.send({ jsonrpc: "2.0", id: message.id, result: { sessionId: session.id } });
        return;
      }
      case Acp.agent.session.load: {
        const session = sessionId === undefined ? undefined : this.#hub.sessions.get(sessionId);
        if (session === undefined || session.ended || session.principal !== this.link.principal.id) {
          this.link.send(errorResponse(message.id, ErrorCode.InvalidParams, "unknown session"));
          return;
        }
        session.connection = this;
        for (const text of session.history) this.link.send(update(session.id, "user_message_chunk", text), session.id);
        this.link.send({ jsonrpc: "2.0", id: message.id, result: {} });
        return;
      }
      case Acp.agent.session.prompt: {
        const session = sessionId === undefined ? undefined : this.#hub.sessions.get(sessionId);
        if (session === undefined) return;
        const prompt = ((message.params as { prompt?: ContentBlock[] }).prompt ?? [])
          .map((b) => (b.type === "text" ? b.text : ""))
          .join("");
        session.history.push(prompt);
        void this.#runScript(session, prompt).then(() =>
          this.link.send({ jsonrpc: "2.0", id: message.id, result: { stopReason: "end_turn" } }, session.id),
        );
        return;
      }
      default:
        this.link.send(errorResponse(message.id, ErrorCode.MethodNotFound, `method not found: ${message.method}`), sessionId);
    }
  }

  /**
   * Runs a prompt as a script, one command a line, with the fixture agent's
   * commands the transport tests need: `echo <text>` (one message chunk),
   * `permission <title>` (request_permission, then a chunk with the outcome),
   * `flood <n> [bytes]` (n chunks of `bytes` characters, 1 KiB by default,
   * one per turn of the event loop, as an agent's output arrives). Any other line is echoed as `echo: <line>`.
   */
  async #runScript(session: Session, prompt: string): Promise<void> {
    for (const line of prompt.split("\n")) {
      const [command = "", ...rest] = line.split(" ");
      const argument = rest.join(" ");
      if (command === "echo") {
        this.link.send(update(session.id, "agent_message_chunk", argument), session.id);
      } else if (command === "permission") {
        this.#nextPermission += 1;
        const id = `perm-${this.#nextPermission}`;
        const answered = new Promise<JsonRpcResponse>((resolve) => this.#permissions.set(id, resolve));
        this.link.send(
          {
            jsonrpc: "2.0",
            id,
            method: Acp.client.session.requestPermission,
            params: {
              sessionId: session.id,
              toolCall: { toolCallId: id, title: argument },
              options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
            },
          },
          session.id,
        );
        const outcome = ((await answered).result as { outcome?: { outcome: string; optionId?: string } } | undefined)?.outcome;
        const text = outcome?.outcome === "selected" ? `outcome: selected ${outcome.optionId}` : "outcome: cancelled";
        this.link.send(update(session.id, "agent_message_chunk", text), session.id);
      } else if (command === "flood") {
        const [count = "0", bytes = "1024"] = argument.split(" ");
        const text = "x".repeat(Number(bytes));
        for (let left = Number(count); left > 0; left--) {
          this.link.send(update(session.id, "agent_message_chunk", text), session.id);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } else {
        this.link.send(update(session.id, "agent_message_chunk", `echo: ${line}`), session.id);
      }
    }
  }

  /** As a node of a shared store looks a session up in its directory: it may wait (resolveGate). */
  async resolveSession(sessionId: string): Promise<void> {
    const gate = this.#hub.resolveGate;
    if (gate === undefined) return;
    this.#hub.resolving.emit("lookup", sessionId);
    await gate;
  }

  sessionAccess(sessionId: string): SessionAccess {
    const session = this.#hub.sessions.get(sessionId);
    if (session === undefined || session.ended || session.principal !== this.link.principal.id) return "unknown";
    return session.connection === this ? "attached" : "loadable";
  }

  detach(): void {
    this.#hub.live.delete(this);
    this.#hub.events.detached.push(this.link.connectionId);
    for (const session of this.#hub.sessions.values()) if (session.connection === this) session.connection = undefined;
  }

  close(): void {
    this.#hub.live.delete(this);
    this.#hub.events.closed.push(this.link.connectionId);
    for (const session of this.#hub.sessions.values()) {
      if (session.connection === this) {
        session.connection = undefined;
        session.ended = true;
      }
    }
  }
}

function update(sessionId: string, kind: string, text: string): JsonRpcMessage {
  return {
    jsonrpc: "2.0",
    method: Acp.client.session.update,
    params: { sessionId, update: { sessionUpdate: kind, content: { type: "text", text } } },
  };
}

export class TransportHub implements ConnectionHub {
  readonly sessions = new Map<string, Session>();
  readonly events: TransportHubEvents = { received: [], detached: [], closed: [] };
  #next = 0;

  /** While set, initialize waits for it. */
  initializeGate: Promise<void> | undefined;
  /** While set, a session lookup (`resolveSession`, before a GET or POST names a session) waits for it. */
  resolveGate: Promise<void> | undefined;
  /** Emits "lookup" (with the session id) when a lookup starts waiting on resolveGate. */
  readonly resolving = new EventEmitter();
  /** Connections neither detached nor closed. */
  readonly live = new Set<TransportHubConnection>();

  connect(link: ClientLink, options: ConnectOptions = {}): HubConnection {
    if (options.agent !== undefined && options.agent !== TEST_AGENT) throw new UnknownAgentError(options.agent);
    const connection = new TransportHubConnection(this, link);
    this.live.add(connection);
    return connection;
  }

  newSession(connection: TransportHubConnection): Session {
    this.#next += 1;
    const session: Session = {
      id: `sess-${this.#next}`,
      createdAt: Date.now(),
      principal: connection.link.principal.id,
      connection,
      history: [],
      ended: false,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  async shutdown(): Promise<void> {}
  agentNames(): string[] {
    return [TEST_AGENT];
  }
  runPrompt(): never {
    throw new Error("one-shot runs are not part of the transport tests");
  }
  status(): Omit<StatusSnapshot, "server" | "devices"> {
    const sessions = [...this.sessions.values()].filter((s) => !s.ended);
    return {
      agents: [],
      connections: [...this.live].map((c) => ({
        connectionId: c.link.connectionId,
        principal: c.link.principal.label,
        profile: c.link.profile,
        connectedAt: c.connectedAt,
        sessions: sessions.filter((s) => s.connection === c).map((s) => s.id),
      })),
      sessions: sessions.map((s) => ({
        sessionId: s.id,
        agent: TEST_AGENT,
        cwd: "/tmp",
        state: s.connection === undefined ? ("detached" as const) : ("live" as const),
        running: false,
        ...(s.connection !== undefined ? { connectionId: s.connection.link.connectionId } : {}),
        owner: s.principal,
        createdAt: s.createdAt,
        updatedAt: s.createdAt,
      })),
      permissions: [],
    };
  }
  transcript(): never {
    throw new Error("not used by the transport tests");
  }
  cancelTurn(): void {}
  closeSession(): void {}
  setEditor(): void {}
  setPermissionPolicy(): void {}
  onChange(): () => void {
    return () => {};
  }
  onSessionUpdate(): () => void {
    return () => {};
  }
}
