// The client every benchmark drives: the smallest client of the ACP remote
// transport that still follows its message flow (spec: "Message flow
// (Streamable HTTP)"), over h2c, h2 (TLS), HTTP/1.1 and WebSocket. The same
// code talks to our server, to the SDK's AcpServer and to the raw baselines, so
// that a ratio between two rows measures the servers, not the clients. It
// parses every message it receives (as any real client must) and keeps no
// more state than counters.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import { WebSocket } from "ws";
import { ACP_PATH, Acp, Header, MediaType, PROTOCOL_VERSION } from "../protocol/acp.ts";

export const Profile = { H2c: "h2c", H2: "h2", Http1: "http1", Ws: "ws" } as const;
export type Profile = (typeof Profile)[keyof typeof Profile];

/** What one prompt turn delivered to the client. */
export interface TurnResult {
  /** `session/update` notifications received during the turn. */
  updates: number;
  /** Bytes of JSON text of those notifications. */
  bytes: number;
  /** Milliseconds from sending the prompt to the first update (NaN without one). */
  firstUpdateMs: number;
  /** Milliseconds from sending the prompt to its response. */
  responseMs: number;
  /** The response carried a JSON-RPC error. */
  error?: string;
}

interface Pending {
  resolve: (message: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/** The updates of the prompt turn being measured. */
export interface Turn {
  start: number;
  first: number;
  updates: number;
  bytes: number;
}

export function startTurn(): Turn {
  return { start: performance.now(), first: Number.NaN, updates: 0, bytes: 0 };
}

/** One `session/update` of the turn, `text` as it came. */
export function countUpdate(turn: Turn | undefined, text: string): void {
  if (turn === undefined) return;
  if (turn.updates === 0) turn.first = performance.now();
  turn.updates++;
  turn.bytes += text.length;
}

/** The turn's figures once `response` (the prompt's answer) arrived. */
export function turnResult(turn: Turn, response: Record<string, unknown>): TurnResult {
  const end = performance.now();
  const result: TurnResult = { updates: turn.updates, bytes: turn.bytes, firstUpdateMs: turn.first - turn.start, responseMs: end - turn.start };
  const error = response["error"] as { message?: string } | undefined;
  if (error !== undefined) result.error = error.message ?? JSON.stringify(error);
  return result;
}

/** Reads SSE `data:` events from text chunks and hands each to `deliver`. */
class SseReader {
  #buffer = "";
  readonly #deliver: (data: string) => void;

  constructor(deliver: (data: string) => void) {
    this.#deliver = deliver;
  }

  push(chunk: string): void {
    const text = this.#buffer.length === 0 ? chunk : this.#buffer + chunk;
    let start = 0;
    for (;;) {
      const end = text.indexOf("\n\n", start);
      if (end === -1) break;
      this.#event(text.slice(start, end));
      start = end + 2;
    }
    this.#buffer = start === 0 ? text : text.slice(start);
  }

  #event(block: string): void {
    // One `data:` line per event is what servers write; several are joined by "\n".
    let data: string | undefined;
    for (const line of block.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    // An event with empty data carries only an id (a resumable stream opens with one): nothing to deliver.
    if (data !== undefined && data !== "") this.#deliver(data);
  }
}

export interface WireClientOptions {
  /** Base URL of the server (the /acp path is added). */
  url: string;
  profile: Profile;
  /** Query of the /acp endpoint (e.g. `agent=NAME`). */
  query?: string;
}

/** One ACP remote connection with one session. */
export class WireClient {
  readonly profile: Profile;
  readonly #endpoint: URL;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #turn: Turn | undefined;
  #connectionId: string | undefined;
  #sessionId: string | undefined;
  #h2: http2.ClientHttp2Session | undefined;
  #agent: http.Agent | undefined;
  #ws: WebSocket | undefined;
  readonly #streams: Array<{ close(): void }> = [];
  #closed = false;

  constructor(options: WireClientOptions) {
    this.profile = options.profile;
    const url = new URL(options.url);
    url.pathname = ACP_PATH;
    if (options.query !== undefined) url.search = options.query;
    if (options.profile === Profile.Ws) url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    this.#endpoint = url;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** initialize, the connection stream, session/new, the session stream. */
  async open(): Promise<void> {
    if (this.profile === Profile.Ws) {
      await this.#openWs();
    } else {
      if (this.profile === Profile.Http1) this.#agent = this.#endpoint.protocol === "https:" ? new https.Agent({ keepAlive: true, rejectUnauthorized: false }) : new http.Agent({ keepAlive: true });
      else await this.#openH2();
      const init = this.#request(Acp.agent.initialize, this.#initializeParams());
      const answer = await this.#post(init.message, true);
      if (answer.status !== 200) throw new Error(`initialize answered HTTP ${answer.status}: ${answer.body}`);
      this.#connectionId = answer.connectionId;
      if (this.#connectionId === undefined) throw new Error("initialize answered no Acp-Connection-Id");
      this.#onMessage(answer.body);
      await init.answer;
      await this.#openStream(undefined);
    }
    const created = this.#request(Acp.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
    await this.#send(created.message);
    const result = (await created.answer)["result"] as { sessionId?: unknown } | undefined;
    if (typeof result?.sessionId !== "string") throw new Error("session/new answered no sessionId");
    this.#sessionId = result.sessionId;
    if (this.profile !== Profile.Ws) await this.#openStream(this.#sessionId);
  }

  /** One prompt turn with `text` as its only block; resolves with its response. */
  async prompt(text: string): Promise<TurnResult> {
    if (this.#sessionId === undefined) throw new Error("open() first");
    const turn = startTurn();
    this.#turn = turn;
    const call = this.#request(Acp.agent.session.prompt, { sessionId: this.#sessionId, prompt: [{ type: "text", text }] });
    await this.#send(call.message);
    const response = await call.answer;
    this.#turn = undefined;
    return turnResult(turn, response);
  }

  /** DELETE (or a close frame), then the sockets. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.#pending.values()) p.reject(new Error("client closed"));
    this.#pending.clear();
    try {
      if (this.#connectionId !== undefined && this.profile !== Profile.Ws) {
        await withTimeout(this.#delete(), 2_000).catch(() => {});
      }
    } finally {
      for (const s of this.#streams) s.close();
      this.#ws?.terminate();
      this.#h2?.destroy();
      this.#agent?.destroy();
    }
  }

  /** Cuts the sockets at once (capacity runs end thousands of connections this way). */
  destroy(): void {
    this.#closed = true;
    for (const p of this.#pending.values()) p.reject(new Error("client destroyed"));
    this.#pending.clear();
    for (const s of this.#streams) s.close();
    this.#ws?.terminate();
    this.#h2?.destroy();
    this.#agent?.destroy();
  }

  #initializeParams(): Record<string, unknown> {
    return { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "acp-remote-bench", version: "1" } };
  }

  #request(method: string, params: unknown): { message: string; answer: Promise<Record<string, unknown>> } {
    const id = this.#nextId++;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    answer.catch(() => {});
    return { message: JSON.stringify({ jsonrpc: "2.0", id, method, params }), answer };
  }

  #onMessage(text: string): void {
    const message = JSON.parse(text) as Record<string, unknown>;
    const method = message["method"];
    if (method === Acp.client.session.update) {
      // What the agent sent is counted; the server's own notices (the title a
      // first prompt gives a session, a session's state) are not the agent's.
      const update = (message["params"] as { update?: { sessionUpdate?: unknown } } | undefined)?.update?.sessionUpdate;
      if (update !== "session_info_update" && update !== "state_update") countUpdate(this.#turn, text);
      return;
    }
    if (method !== undefined) return; // other server requests are not part of these benchmarks
    const id = message["id"];
    if (typeof id !== "number") return;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    pending.resolve(message);
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
  }

  async #send(message: string): Promise<void> {
    if (this.#ws !== undefined) {
      const ws = this.#ws;
      await new Promise<void>((resolve, reject) => ws.send(message, (error) => (error ? reject(error) : resolve())));
      return;
    }
    const answer = await this.#post(message, false);
    if (answer.status !== 202 && answer.status !== 200) throw new Error(`POST answered HTTP ${answer.status}: ${answer.body}`);
  }

  #headers(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.#connectionId !== undefined) headers[Header.ConnectionId] = this.#connectionId;
    if (this.#sessionId !== undefined) headers[Header.SessionId] = this.#sessionId;
    return headers;
  }

  #post(body: string, initialize: boolean): Promise<{ status: number; body: string; connectionId: string | undefined }> {
    const headers = this.#headers({ [Header.ContentType]: MediaType.Json });
    if (initialize) {
      delete headers[Header.ConnectionId];
      delete headers[Header.SessionId];
    }
    return this.#exchange("POST", headers, body);
  }

  async #delete(): Promise<void> {
    const headers = this.#headers({});
    delete headers[Header.SessionId];
    await this.#exchange("DELETE", headers, undefined);
  }

  #exchange(method: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; body: string; connectionId: string | undefined }> {
    return new Promise((resolve, reject) => {
      const finish = (status: number, responseHeaders: http.IncomingHttpHeaders, stream: NodeJS.ReadableStream): void => {
        let text = "";
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => (text += chunk));
        stream.on("end", () => {
          const id = responseHeaders[Header.ConnectionId];
          resolve({ status, body: text, connectionId: Array.isArray(id) ? id[0] : id });
        });
        stream.on("error", reject);
      };
      if (this.#h2 !== undefined) {
        const req = this.#h2.request({ ":method": method, ":path": this.#path(), ...headers });
        req.on("response", (h) => finish(Number(h[":status"]), h as http.IncomingHttpHeaders, req));
        req.on("error", reject);
        req.end(body);
        return;
      }
      const lib = this.#endpoint.protocol === "https:" ? https : http;
      const req = lib.request(this.#endpoint, { method, headers, agent: this.#agent }, (res) => finish(res.statusCode ?? 0, res.headers, res));
      req.on("error", reject);
      req.end(body);
    });
  }

  #path(): string {
    return `${this.#endpoint.pathname}${this.#endpoint.search}`;
  }

  async #openH2(): Promise<void> {
    const session = http2.connect(this.#endpoint.origin, { rejectUnauthorized: false });
    this.#h2 = session;
    session.on("error", (error) => this.#fail(error));
    session.on("close", () => this.#fail(new Error("HTTP/2 session closed")));
    await new Promise<void>((resolve, reject) => {
      session.once("connect", () => resolve());
      session.once("error", reject);
    });
  }

  /** Opens the connection-scoped (no session) or a session-scoped GET stream; resolves on its 200. */
  #openStream(sessionId: string | undefined): Promise<void> {
    const headers = this.#headers({ [Header.Accept]: MediaType.EventStream });
    if (sessionId === undefined) delete headers[Header.SessionId];
    else headers[Header.SessionId] = sessionId;
    const reader = new SseReader((data) => this.#onMessage(data));
    return new Promise<void>((resolve, reject) => {
      const onBody = (status: number, stream: NodeJS.ReadableStream & { destroy(): void }): void => {
        if (status !== 200) {
          reject(new Error(`GET stream answered HTTP ${status}`));
          stream.resume();
          return;
        }
        this.#streams.push({ close: () => stream.destroy() });
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => reader.push(chunk));
        stream.on("error", () => {});
        stream.on("end", () => this.#fail(new Error("a GET stream ended")));
        resolve();
      };
      if (this.#h2 !== undefined) {
        const req = this.#h2.request({ ":method": "GET", ":path": this.#path(), ...headers }, { endStream: true });
        req.on("response", (h) => onBody(Number(h[":status"]), req));
        req.on("error", reject);
        return;
      }
      const lib = this.#endpoint.protocol === "https:" ? https : http;
      const req = lib.request(this.#endpoint, { method: "GET", headers, agent: this.#agent }, (res) => onBody(res.statusCode ?? 0, res));
      req.on("error", reject);
      req.end();
    });
  }

  async #openWs(): Promise<void> {
    const ws = new WebSocket(this.#endpoint, { rejectUnauthorized: false, perMessageDeflate: false });
    this.#ws = ws;
    ws.on("message", (data, isBinary) => {
      if (!isBinary) this.#onMessage(data.toString());
    });
    ws.on("close", () => this.#fail(new Error("WebSocket closed")));
    await new Promise<void>((resolve, reject) => {
      ws.once("upgrade", (res) => {
        const id = res.headers[Header.ConnectionId];
        this.#connectionId = Array.isArray(id) ? id[0] : id;
      });
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.on("error", (error) => this.#fail(error));
    const init = this.#request(Acp.agent.initialize, this.#initializeParams());
    await this.#send(init.message);
    const answer = await init.answer;
    if (answer["error"] !== undefined) throw new Error(`initialize failed: ${JSON.stringify(answer["error"])}`);
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what = "operation"): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
