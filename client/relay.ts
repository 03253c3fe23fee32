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
import { Backoff, sleep } from "./backoff.ts";
import { connectFailureHint, handshake } from "./handshake.ts";
import { CookieJar } from "./cookies.ts";
import { ExitCode } from "./exit-code.ts";
import { createTransport, type CreateTransportOptions } from "./index.ts";
import { HeldMessages } from "./held-messages.ts";
import { InFlightRequests } from "./in-flight-requests.ts";
import { OpenSessions } from "./open-sessions.ts";
import { RelayRequests } from "./relay-requests.ts";
import { ServerRequestIds } from "./server-request-ids.ts";
import { ClientTransportError, TransportErrorCode, type ClientTransport } from "./transport.ts";

export { ExitCode } from "./exit-code.ts";

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

type State = "idle" | "connecting" | "open" | "reconnecting" | "ended";

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A message named in the log. */
function what(message: JsonRpcMessage): string {
  return "method" in message ? message.method : `the answer to request ${String(message.id)}`;
}

function isUnauthorized(error: unknown): boolean {
  return error instanceof ClientTransportError && error.code === TransportErrorCode.Unauthorized;
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
  readonly #inFlight = new InFlightRequests();
  readonly #held: HeldMessages;
  readonly #sessions = new OpenSessions();
  readonly #own = new RelayRequests();
  /** Connections made so far; the current one's number. */
  #generation = 0;
  /** The server's requests to the editor not yet answered (ids rewritten from the second connection on). */
  readonly #serverRequests: ServerRequestIds;
  /** The first connection attempt, while it runs. */
  #firstConnecting: Promise<void> | undefined;
  /** Sends go one at a time, so the server sees the editor's order. */
  #sendChain: Promise<void> = Promise.resolve();
  #resolveDone!: (code: ExitCode) => void;
  /** Settles with the exit code when the relay has ended. */
  readonly done: Promise<ExitCode>;

  constructor(toEditor: (message: JsonRpcMessage) => void, options: RelayOptions) {
    this.#toEditor = toEditor;
    this.#options = options;
    const maxHeld = options.maxHeldMessages ?? DEFAULT_CONNECT_MAX_HELD_MESSAGES;
    this.#serverRequests = new ServerRequestIds(maxHeld);
    this.#held = new HeldMessages(maxHeld);
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  /** A message from the editor. */
  fromEditor(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      const routed = this.#serverRequests.fromEditor(message, this.#generation);
      if ("stale" in routed) {
        this.#options.log(`dropped the editor's answer to request ${String(message.id)} of a connection that is gone`);
        return;
      }
      message = routed.response;
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
      await Promise.race([this.#inFlight.drained(), deadline]);
    }
    clearTimeout(timer);
    // The first connection may have failed meanwhile, and ended the relay with its own code.
    if ((this.#state as State) === "ended") return;
    const wasOpen = this.#state === "open";
    this.#state = "ended";
    this.#stop.abort();
    if (wasOpen) await this.#sendChain;
    for (const message of this.#held.takeAll()) if (isRequest(message)) this.#fail(message, "the editor closed the connection");
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
      const message = `cannot connect to ${this.#options.url}: ${describe(error)}${connectFailureHint(error)}`;
      this.#options.log(message);
      this.#toEditor(errorResponse(initialize.id, unauthorized ? ErrorCode.AuthRequired : ErrorCode.InternalError, `acp-remote connect: ${message}`));
      this.#finish(unauthorized ? ExitCode.Unauthorized : ExitCode.ConnectionFailed, message);
    }
  }

  /** Opens a new connection and runs initialize on it (handshake.ts). */
  async #connect(initialize: JsonRpcRequest, first: boolean): Promise<JsonRpcResponse> {
    const transport = createTransport(this.#options.url, { ...this.#options.transport, cookies: this.#jar });
    this.#transport = transport;
    this.#generation++;
    const response = await handshake(transport, {
      initialize,
      first,
      own: this.#own,
      timeoutMs: this.#options.initializeTimeoutMs ?? DEFAULT_CLIENT_INITIALIZE_TIMEOUT_MS,
      isCurrent: () => transport === this.#transport,
      onMessage: (message) => this.#fromServer(message),
      onLost: (error) => this.#lost(error),
      log: this.#options.log,
    });
    const result = response.result;
    if (isRecord(result) && isRecord(result["agentCapabilities"])) {
      this.#loadSession = result["agentCapabilities"]["loadSession"] === true;
    }
    return response;
  }

  #opened(): void {
    this.#state = "open";
    for (const message of this.#held.takeAll()) this.#send(message);
  }

  // -- traffic

  #send(message: JsonRpcMessage): void {
    const transport = this.#transport;
    if (transport === undefined) {
      this.#hold(message);
      return;
    }
    if (isRequest(message)) this.#inFlight.add(message);
    this.#sendChain = this.#sendChain.then(async () => {
      if (transport !== this.#transport) {
        // The connection dropped while this waited its turn: it was never sent.
        if (isRequest(message)) this.#inFlight.take(message.id);
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
        } else if (transport === this.#transport && this.#inFlight.take(message.id) !== undefined) {
          // The transport is still up, so this failure was this request's alone.
          this.#fail(message, describe(error));
        }
      }
    });
  }

  #fromServer(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      if (this.#own.answer(message)) return;
      const request = this.#inFlight.take(message.id);
      if (request === undefined) {
        // Already answered: failed when its connection dropped, its turn
        // finished on the server meanwhile. A second answer would confuse the editor.
        this.#options.log(`dropped a late answer to request ${String(message.id)}, which was already answered`);
        return;
      }
      this.#sessions.track(request, message);
      this.#toEditor(message);
      return;
    }
    if (isRequest(message)) {
      this.#toEditor(this.#serverRequests.toEditor(message, this.#generation));
      return;
    }
    if (message.method === Acp.client.session.update) {
      const shown = this.#sessions.update(message);
      if (shown !== undefined) this.#toEditor(shown);
      return;
    }
    if (message.method === Acp.protocol.cancelRequest) {
      this.#toEditor(this.#serverRequests.cancelToEditor(message, this.#generation));
      return;
    }
    this.#toEditor(message);
  }

  #hold(message: JsonRpcMessage): void {
    if (this.#held.push(message)) return;
    const full = `${this.#held.max} messages are already waiting for the reconnect`;
    if (isRequest(message)) this.#fail(message, `${full}; this request is refused`);
    else this.#options.log(`${full}; dropped ${what(message)}`);
  }

  #fail(request: JsonRpcRequest, reason: string, code: number = ErrorCode.InternalError): void {
    this.#toEditor(errorResponse(request.id, code, `acp-remote connect: ${reason}`));
  }

  #failHeld(reason: string): void {
    for (const message of this.#held.takeAll()) {
      if (isRequest(message)) this.#fail(message, reason);
      else this.#options.log(`dropped ${what(message)}: ${reason}`);
    }
  }

  // -- loss and reconnect

  #lost(error: ClientTransportError | undefined): void {
    if (this.#state === "ended" || this.#state === "idle") return;
    const reason = error?.message ?? "the connection closed";
    this.#transport = undefined;
    this.#own.failAll(error ?? new Error(reason));
    if (this.#state === "connecting") return; // #firstConnect answers the editor
    // v1 has no replay (spec: v1 durability): what was in flight is lost.
    for (const request of this.#inFlight.takeAll()) {
      this.#fail(request, `the connection to the server was lost (${reason}); the request was not replayed`);
    }
    // The server's questions of that connection can no longer be answered:
    // tell the editor to drop them (ACP `$/cancel_request`).
    for (const cancel of this.#serverRequests.cancelsFor(this.#generation)) this.#toEditor(cancel);
    if (this.#ending) return; // stdin has ended: end() finishes up, no reconnect
    if (this.#state === "reconnecting") return; // a reconnect attempt failed; the loop goes on
    this.#options.log(`connection lost: ${reason}; reconnecting`);
    this.#state = "reconnecting";
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const backoff = new Backoff(this.#options.reconnectMinMs ?? DEFAULT_RECONNECT_MIN_MS, this.#options.reconnectMaxMs ?? DEFAULT_RECONNECT_MAX_MS);
    const giveUp = this.#options.reconnectGiveUpMs ?? DEFAULT_RECONNECT_GIVE_UP_MS;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      await sleep(backoff.delayMs, this.#stop.signal);
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
        this.#sessions.stopReloading();
        void transport?.close().catch(() => {});
        if (isUnauthorized(error)) {
          this.#giveUp(`the server refused the credentials: ${describe(error)}`, ExitCode.Unauthorized);
          return;
        }
        const delay = backoff.next();
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
    const transport = this.#transport;
    await this.#sessions.reloadAll((method, params) => this.#own.request(transport, method, params), this.#options.log);
    if (this.#transport === undefined) throw new ClientTransportError(TransportErrorCode.ConnectionLost, "the connection was lost while resuming");
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
