// The heart of `acp-remote connect`: relays every JSON-RPC message between an
// editor (stdio) and a remote server (a ClientTransport), and keeps the editor's
// sessions alive across network failures.
//
// It reads only what it needs: the editor's `initialize` (to run it again on a
// new connection) and the sessions the editor opened (`session/new` results,
// `session/load`), with their `cwd` and `mcpServers` (to load them again).
//
// Reconnect (spec: v1 durability, rule 7 — the client's to do): when the
// connection drops, requests in flight are failed (v1 has no replay), the
// relay reconnects (at once, then with exponential backoff), runs `initialize`, and sends
// `session/load` for every open session before it lets the editor's held
// messages through. The answers to these requests of its own are not
// forwarded. The replay that `session/load` produces is filtered: updates the
// editor has already seen, and the user's own prompts, are not forwarded
// again; updates the session emitted while the editor was away are
// (seen-updates.ts).
import { Acp } from "../protocol/acp.ts";
import {
  errorResponse,
  ErrorCode,
  isRecord,
  isRequest,
  isResponse,
  paramsSessionId,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../protocol/jsonrpc.ts";
import {
  DEFAULT_CLIENT_INITIALIZE_TIMEOUT_MS,
  DEFAULT_CONNECT_DRAIN_MS,
  DEFAULT_CONNECT_MAX_HELD_MESSAGES,
  DEFAULT_RECONNECT_GIVE_UP_MS,
  DEFAULT_RECONNECT_MAX_MS,
  DEFAULT_RECONNECT_MIN_MS,
} from "./limits.ts";
import { CookieJar } from "./cookies.ts";
import { SeenUpdates, type ReplayFilter } from "./seen-updates.ts";
import { createTransport, type CreateTransportOptions } from "./index.ts";
import { TransportError, TransportErrorCode, type ClientTransport } from "./transport.ts";

/** Exit codes of `acp-remote connect`. */
export const ExitCode = {
  /** The editor closed stdin. */
  Ok: 0,
  /** The server could not be reached, or reconnecting gave up. */
  ConnectionFailed: 1,
  /** Bad command line. */
  Usage: 2,
  /** The server refused the credentials. */
  Unauthorized: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface RelayOptions {
  url: string;
  transport: CreateTransportOptions;
  /** One line of the editor's log (stderr). */
  log: (line: string) => void;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  reconnectGiveUpMs?: number;
  maxHeldMessages?: number;
  drainMs?: number;
  initializeTimeoutMs?: number;
}

interface OpenSession {
  cwd: string;
  mcpServers: unknown[];
  /** What the editor has been shown of it. */
  seen: SeenUpdates;
}

type State = "idle" | "connecting" | "open" | "reconnecting" | "ended";

/** Prefix of the ids of the relay's own requests; editors number theirs. */
const OWN_ID_PREFIX = "acp-remote-connect/";

function key(id: JsonRpcId): string {
  return typeof id === "string" ? `s:${id}` : `n:${String(id)}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isUnauthorized(error: unknown): boolean {
  return error instanceof TransportError && error.code === TransportErrorCode.Unauthorized;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

export class Relay {
  readonly #toEditor: (message: JsonRpcMessage) => void;
  readonly #options: RelayOptions;
  readonly #jar = new CookieJar();
  readonly #stop = new AbortController();
  #state: State = "idle";
  /** stdin has ended; the relay is winding down. */
  #ending = false;
  #transport: ClientTransport | undefined;
  /** The editor's initialize request, run again on every new connection. */
  #initialize: JsonRpcRequest | undefined;
  #loadSession = false;
  /** Editor requests sent to the server and not yet answered. */
  readonly #inFlight = new Map<string, JsonRpcRequest>();
  /** Editor messages waiting for a connection. */
  #held: JsonRpcMessage[] = [];
  readonly #sessions = new Map<string, OpenSession>();
  /**
   * Sessions being loaded again by the relay, with what is left to recognise of
   * what the editor has seen: their replay is filtered against it.
   */
  readonly #reloading = new Map<string, ReplayFilter>();
  readonly #own = new Map<string, { resolve: (r: JsonRpcResponse) => void; reject: (e: Error) => void }>();
  #ownSeq = 0;
  /** Connections made so far; the current one's number. */
  #generation = 0;
  /**
   * The server's requests to the editor not yet answered, by the id the editor
   * knows, with the id the server gave and the connection it came on. From the
   * second connection on, ids are rewritten so they cannot collide with those
   * of a connection that is gone (a server numbers each connection from the
   * start again).
   */
  readonly #serverRequests = new Map<string, { id: JsonRpcId; editorId: JsonRpcId; generation: number }>();
  /** The first connection attempt, while it runs. */
  #firstConnecting: Promise<void> | undefined;
  /** Called when no editor request is in flight any more. */
  #drainWaiters: Array<() => void> = [];
  /** Sends go one at a time, so the server sees the editor's order. */
  #sendChain: Promise<void> = Promise.resolve();
  #resolveDone!: (code: ExitCode) => void;
  /** Settles with the exit code when the relay has ended. */
  readonly done: Promise<ExitCode>;

  constructor(toEditor: (message: JsonRpcMessage) => void, options: RelayOptions) {
    this.#toEditor = toEditor;
    this.#options = options;
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  /** A message from the editor. */
  fromEditor(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      const routed = this.#answerToServer(message);
      if (routed === undefined) return;
      message = routed;
    }
    switch (this.#state) {
      case "ended":
        if (isRequest(message)) this.#fail(message, "acp-remote connect has stopped relaying");
        return;
      case "idle":
        if (isRequest(message) && message.method === Acp.agent.initialize) {
          this.#initialize = message;
          this.#firstConnecting = this.#firstConnect(message);
          return;
        }
        if (isRequest(message)) {
          this.#fail(message, "the first request must be initialize", ErrorCode.InvalidRequest);
        } else {
          this.#options.log(`ignored a message before initialize: ${"method" in message ? message.method : "a response"}`);
        }
        return;
      case "connecting":
      case "reconnecting":
        this.#hold(message);
        return;
      case "open":
        this.#send(message);
        return;
    }
  }

  /**
   * The editor closed its side: wait a little for the answers to its last
   * requests (a script that pipes a few lines in wants them), then end the
   * connection (DELETE) and stop.
   */
  async end(): Promise<void> {
    if (this.#state === "ended" || this.#ending) return;
    this.#ending = true;
    const drainMs = this.#options.drainMs ?? DEFAULT_CONNECT_DRAIN_MS;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, drainMs);
    });
    if (this.#state === "connecting") await Promise.race([this.#firstConnecting, deadline]);
    if (this.#state === "open") {
      await Promise.race([this.#sendChain, deadline]);
      if (this.#inFlight.size > 0) {
        await Promise.race([new Promise<void>((resolve) => this.#drainWaiters.push(resolve)), deadline]);
      }
    }
    clearTimeout(timer);
    // The first connection may have failed meanwhile, and ended the relay with its own code.
    if ((this.#state as State) === "ended") return;
    const wasOpen = this.#state === "open";
    this.#state = "ended";
    this.#stop.abort();
    if (wasOpen) await this.#sendChain;
    for (const message of this.#held) if (isRequest(message)) this.#fail(message, "the editor closed the connection");
    this.#held = [];
    const transport = this.#transport;
    this.#transport = undefined;
    await transport?.close().catch(() => {});
    this.#resolveDone(ExitCode.Ok);
  }

  // -- the first connection: its failure is the editor's answer to initialize

  async #firstConnect(initialize: JsonRpcRequest): Promise<void> {
    this.#state = "connecting";
    try {
      const response = await this.#connect(initialize, true);
      if (this.#state !== "connecting") return;
      this.#toEditor(response);
      if (response.error !== undefined) {
        // The agent refused initialize; the editor may try again.
        this.#options.log(`the server's agent refused initialize: ${response.error.message}`);
        const transport = this.#transport;
        this.#transport = undefined;
        await transport?.close().catch(() => {});
        this.#state = "idle";
        this.#failHeld("initialize failed");
        return;
      }
      this.#options.log(`connected to ${this.#options.url} over ${this.#transport?.protocol ?? "?"} (connection ${this.#transport?.connectionId ?? "?"})`);
      this.#opened();
    } catch (error) {
      if (this.#state !== "connecting") return;
      const unauthorized = isUnauthorized(error);
      const hint = unauthorized
        ? " (pass --token or set ACP_REMOTE_TOKEN)"
        : /certificate/i.test(describe(error))
          ? " (trust the server's certificate with --ca FILE, or accept any with --insecure)"
          : "";
      const message = `cannot connect to ${this.#options.url}: ${describe(error)}${hint}`;
      this.#options.log(message);
      this.#toEditor(errorResponse(initialize.id, unauthorized ? ErrorCode.AuthRequired : ErrorCode.InternalError, `acp-remote connect: ${message}`));
      this.#finish(unauthorized ? ExitCode.Unauthorized : ExitCode.ConnectionFailed, message);
    }
  }

  /**
   * Opens a transport and runs initialize on it. The first time the editor's
   * own request goes out and its answer is returned for the editor; after
   * that the relay sends a copy under its own id.
   */
  async #connect(initialize: JsonRpcRequest, first: boolean): Promise<JsonRpcResponse> {
    const transport = createTransport(this.#options.url, { ...this.#options.transport, cookies: this.#jar });
    this.#transport = transport;
    this.#generation++;
    let firstAnswer: ((r: JsonRpcResponse) => void) | undefined;
    const firstResponse = new Promise<JsonRpcResponse>((resolve) => {
      firstAnswer = resolve;
    });
    transport.onmessage = (message) => {
      if (transport !== this.#transport) return;
      if (first && isResponse(message) && key(message.id) === key(initialize.id)) {
        firstAnswer?.(message);
        return;
      }
      this.#fromServer(message);
    };
    transport.onerror = (error) => this.#options.log(describe(error));
    let failure: TransportError | undefined;
    let failed: (() => void) | undefined;
    const closed = new Promise<never>((_, reject) => {
      failed = () => reject(failure ?? new TransportError(TransportErrorCode.ConnectionLost, "the connection closed during initialize"));
    });
    closed.catch(() => {});
    transport.onclose = (error) => {
      failure = error;
      if (transport !== this.#transport) return;
      failed?.();
      this.#lost(error);
    };
    await transport.start();
    let response: JsonRpcResponse;
    if (first) {
      await transport.send(initialize);
      response = await Promise.race([firstResponse, closed, this.#timeout("initialize")]);
    } else {
      response = await Promise.race([this.#request(Acp.agent.initialize, initialize.params), closed, this.#timeout("initialize")]);
    }
    const result = response.result;
    if (isRecord(result) && isRecord(result["agentCapabilities"])) {
      this.#loadSession = result["agentCapabilities"]["loadSession"] === true;
    }
    return response;
  }

  #timeout(what: string): Promise<never> {
    const ms = this.#options.initializeTimeoutMs ?? DEFAULT_CLIENT_INITIALIZE_TIMEOUT_MS;
    return new Promise((_, reject) => {
      const timer = setTimeout(() => reject(new TransportError(TransportErrorCode.Unreachable, `no answer to ${what} within ${ms} ms`)), ms);
      timer.unref();
    });
  }

  #opened(): void {
    this.#state = "open";
    const held = this.#held;
    this.#held = [];
    for (const message of held) this.#send(message);
  }

  // -- traffic

  #send(message: JsonRpcMessage): void {
    const transport = this.#transport;
    if (transport === undefined) {
      this.#hold(message);
      return;
    }
    if (isRequest(message)) this.#inFlight.set(key(message.id), message);
    this.#sendChain = this.#sendChain.then(async () => {
      if (transport !== this.#transport) {
        // The connection dropped while this waited its turn: it was never sent.
        if (isRequest(message)) this.#inFlight.delete(key(message.id));
        if (this.#state === "ended") {
          if (isRequest(message)) this.#fail(message, "the editor closed the connection");
        } else {
          this.#hold(message);
        }
        return;
      }
      try {
        await transport.send(message);
      } catch (error) {
        // A request is failed with the rest of the in-flight ones when the
        // transport reports the loss; anything else is said in the log.
        if (!isRequest(message)) {
          this.#options.log(`could not deliver ${"method" in message ? message.method : `the answer to ${String(message.id)}`}: ${describe(error)}`);
        } else if (transport === this.#transport && this.#inFlight.delete(key(message.id))) {
          // The transport is still up, so this failure was this request's alone.
          this.#fail(message, describe(error));
          this.#checkDrained();
        }
      }
    });
  }

  #fromServer(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      const k = key(message.id);
      const own = this.#own.get(k);
      if (own !== undefined) {
        this.#own.delete(k);
        own.resolve(message);
        return;
      }
      const request = this.#inFlight.get(k);
      if (request === undefined) {
        // Already answered: failed when its connection dropped, its turn
        // finished on the server meanwhile. A second answer would confuse the editor.
        this.#options.log(`dropped a late answer to request ${String(message.id)}, which was already answered`);
        return;
      }
      this.#inFlight.delete(k);
      this.#track(request, message);
      this.#toEditor(message);
      this.#checkDrained();
      return;
    }
    if ("method" in message && message.method === Acp.client.session.update) {
      const sessionId = paramsSessionId(message);
      const session = sessionId === undefined ? undefined : this.#sessions.get(sessionId);
      const filter = sessionId === undefined ? undefined : this.#reloading.get(sessionId);
      if (filter !== undefined && sessionId !== undefined) {
        const rest = filter.pass(message.params);
        if (rest === undefined) {
          if (filter.done) this.#reloading.delete(sessionId);
          return;
        }
        // The first update the editor has not seen: the replay has caught up
        // with what it has, and everything after this on the (ordered)
        // session stream is new.
        this.#reloading.delete(sessionId);
        message = { ...message, params: rest };
      }
      session?.seen.remember(message.params);
    }
    if (isRequest(message)) message = this.#requestToEditor(message);
    this.#toEditor(message);
  }

  /**
   * The editor's answer to a server request, with the server's id back; none
   * when it answers a request of a connection that is gone (the editor was
   * told to cancel it; the new connection does not know it).
   */
  #answerToServer(response: JsonRpcResponse): JsonRpcResponse | undefined {
    const k = key(response.id);
    const pending = this.#serverRequests.get(k);
    if (pending === undefined) return response;
    this.#serverRequests.delete(k);
    if (pending.generation !== this.#generation) {
      this.#options.log(`dropped the editor's answer to request ${String(response.id)} of a connection that is gone`);
      return undefined;
    }
    return { ...response, id: pending.id };
  }

  /** A request from the server, under an id the editor can tell apart from those of earlier connections. */
  #requestToEditor(request: JsonRpcRequest): JsonRpcRequest {
    const id = this.#generation <= 1 ? request.id : `${OWN_ID_PREFIX}c${this.#generation}/${String(request.id)}`;
    this.#serverRequests.set(key(id), { id: request.id, editorId: id, generation: this.#generation });
    // Editors that never answer cancelled requests must not make this grow without end.
    const max = this.#options.maxHeldMessages ?? DEFAULT_CONNECT_MAX_HELD_MESSAGES;
    if (this.#serverRequests.size > max) {
      const oldest = this.#serverRequests.keys().next().value;
      if (oldest !== undefined) this.#serverRequests.delete(oldest);
    }
    return id === request.id ? request : { ...request, id };
  }

  /** Follows the sessions the editor opens and ends, from the answers to its requests. */
  #track(request: JsonRpcRequest, response: JsonRpcResponse): void {
    if (response.error !== undefined) return;
    const params = isRecord(request.params) ? request.params : {};
    const result = isRecord(response.result) ? response.result : {};
    const open = (sessionId: unknown): void => {
      if (typeof sessionId !== "string") return;
      const previous = this.#sessions.get(sessionId);
      this.#sessions.set(sessionId, {
        cwd: typeof params["cwd"] === "string" ? params["cwd"] : "",
        mcpServers: Array.isArray(params["mcpServers"]) ? params["mcpServers"] : [],
        seen: previous?.seen ?? new SeenUpdates(),
      });
    };
    switch (request.method) {
      case Acp.agent.session.new:
        open(result["sessionId"]);
        return;
      case Acp.agent.session.load:
      case Acp.agent.session.resume:
        open(params["sessionId"]);
        return;
      case Acp.agent.session.close:
      case Acp.agent.session.delete:
        if (typeof params["sessionId"] === "string") this.#sessions.delete(params["sessionId"]);
        return;
    }
  }

  /** A request of the relay's own; its answer is not forwarded. */
  #request(method: string, params: unknown): Promise<JsonRpcResponse> {
    const transport = this.#transport;
    const id = `${OWN_ID_PREFIX}${++this.#ownSeq}`;
    return new Promise((resolve, reject) => {
      if (transport === undefined) {
        reject(new TransportError(TransportErrorCode.Closed, "no connection"));
        return;
      }
      this.#own.set(key(id), { resolve, reject });
      transport.send({ jsonrpc: "2.0", id, method, params }).catch((error: unknown) => {
        this.#own.delete(key(id));
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  #checkDrained(): void {
    if (this.#inFlight.size > 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #hold(message: JsonRpcMessage): void {
    const max = this.#options.maxHeldMessages ?? DEFAULT_CONNECT_MAX_HELD_MESSAGES;
    if (this.#held.length >= max) {
      const what = "method" in message ? message.method : `the answer to request ${String(message.id)}`;
      if (isRequest(message)) {
        this.#fail(message, `${max} messages are already waiting for the reconnect; this request is refused`);
      } else {
        this.#options.log(`${max} messages are already waiting for the reconnect; dropped ${what}`);
      }
      return;
    }
    this.#held.push(message);
  }

  #fail(request: JsonRpcRequest, reason: string, code: number = ErrorCode.InternalError): void {
    this.#toEditor(errorResponse(request.id, code, `acp-remote connect: ${reason}`));
  }

  #failHeld(reason: string): void {
    const held = this.#held;
    this.#held = [];
    for (const message of held) {
      if (isRequest(message)) this.#fail(message, reason);
      else this.#options.log(`dropped ${"method" in message ? message.method : `the answer to request ${String(message.id)}`}: ${reason}`);
    }
  }

  // -- loss and reconnect

  #lost(error: TransportError | undefined): void {
    if (this.#state === "ended" || this.#state === "idle") return;
    const reason = error?.message ?? "the connection closed";
    this.#transport = undefined;
    for (const own of this.#own.values()) own.reject(error ?? new Error(reason));
    this.#own.clear();
    if (this.#state === "connecting") return; // #firstConnect answers the editor
    // v1 has no replay (spec: v1 durability): what was in flight is lost.
    for (const request of this.#inFlight.values()) {
      this.#fail(request, `the connection to the server was lost (${reason}); the request was not replayed`);
    }
    this.#inFlight.clear();
    this.#checkDrained();
    // The server's questions of that connection can no longer be answered:
    // tell the editor to drop them (ACP `$/cancel_request`).
    for (const pending of this.#serverRequests.values()) {
      if (pending.generation !== this.#generation) continue;
      this.#toEditor({ jsonrpc: "2.0", method: Acp.protocol.cancelRequest, params: { requestId: pending.editorId } });
    }
    if (this.#ending) return; // stdin has ended: end() finishes up, no reconnect
    if (this.#state === "reconnecting") return; // a reconnect attempt failed; the loop goes on
    this.#options.log(`connection lost: ${reason}; reconnecting`);
    this.#state = "reconnecting";
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const min = this.#options.reconnectMinMs ?? DEFAULT_RECONNECT_MIN_MS;
    const max = this.#options.reconnectMaxMs ?? DEFAULT_RECONNECT_MAX_MS;
    const giveUp = this.#options.reconnectGiveUpMs ?? DEFAULT_RECONNECT_GIVE_UP_MS;
    const started = Date.now();
    // The first attempt goes at once (a cut connection to a live server comes
    // straight back); the next ones back off exponentially.
    let delay = 0;
    for (let attempt = 1; ; attempt++) {
      await sleep(delay, this.#stop.signal);
      if (this.#state !== "reconnecting") return;
      try {
        await this.#resume();
        if (this.#state !== "reconnecting") return;
        this.#options.log(`reconnected over ${this.#transport?.protocol ?? "?"} (connection ${this.#transport?.connectionId ?? "?"}) after ${attempt} attempt(s)`);
        this.#opened();
        return;
      } catch (error) {
        if (this.#state !== "reconnecting") return;
        const transport = this.#transport;
        this.#transport = undefined;
        this.#reloading.clear();
        void transport?.close().catch(() => {});
        if (isUnauthorized(error)) {
          this.#giveUp(`the server refused the credentials: ${describe(error)}`, ExitCode.Unauthorized);
          return;
        }
        delay = delay === 0 ? min : Math.min(delay * 2, max);
        if (Date.now() - started + delay >= giveUp) {
          this.#giveUp(`the server stayed unreachable for ${Math.round((Date.now() - started) / 1000)} s: ${describe(error)}`, ExitCode.ConnectionFailed);
          return;
        }
        this.#options.log(`reconnect attempt ${attempt} failed: ${describe(error)}; next in ${delay} ms`);
      }
    }
  }

  /** New connection, initialize again, load every open session again. */
  async #resume(): Promise<void> {
    const initialize = this.#initialize as JsonRpcRequest;
    const response = await this.#connect(initialize, false);
    if (response.error !== undefined) throw new Error(`initialize failed: ${response.error.message}`);
    if (this.#sessions.size > 0 && !this.#loadSession) {
      this.#options.log(`the server's agent cannot load sessions; ${this.#sessions.size} open session(s) are gone`);
      this.#sessions.clear();
      return;
    }
    for (const [sessionId, session] of this.#sessions) {
      // The filter outlives the load's answer: that answer travels on the
      // connection stream, the replay on the session stream, and the two are
      // not ordered with each other (spec: POST /acp, "Which stream carries
      // the response").
      if (!session.seen.empty) this.#reloading.set(sessionId, session.seen.replay());
      try {
        const loaded = await this.#request(Acp.agent.session.load, { sessionId, cwd: session.cwd, mcpServers: session.mcpServers });
        if (loaded.error !== undefined) {
          this.#options.log(`session ${sessionId} could not be loaded again: ${loaded.error.message}`);
          this.#sessions.delete(sessionId);
          this.#reloading.delete(sessionId);
        }
      } catch (error) {
        this.#reloading.delete(sessionId);
        throw error;
      }
    }
    if (this.#transport === undefined) throw new TransportError(TransportErrorCode.ConnectionLost, "the connection was lost while resuming");
  }

  #giveUp(reason: string, code: ExitCode): void {
    this.#options.log(`giving up: ${reason}`);
    this.#failHeld(`gave up reconnecting: ${reason}`);
    this.#finish(code, reason);
  }

  #finish(code: ExitCode, reason: string): void {
    this.#state = "ended";
    this.#stop.abort();
    this.#failHeld(reason);
    const transport = this.#transport;
    this.#transport = undefined;
    void transport?.close().catch(() => {});
    this.#resolveDone(code);
  }
}
