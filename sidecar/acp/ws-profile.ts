// The WebSocket profile of /acp (spec: "GET /acp with Upgrade: websocket"):
// a GET with `Upgrade: websocket` creates a new connection, answered 101 with
// `Acp-Connection-Id` (and the affinity cookie). Every message is a text
// frame holding one JSON-RPC message; binary frames are ignored; the first
// message must be `initialize`. A socket that closes detaches the connection's
// sessions at once (design: decision 3).
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { RawData, WebSocket } from "ws";
import type { ClientLink, ConnectionHub, HubConnection, Principal } from "../hub/types.ts";
import type { JsonRpcId, JsonRpcMessage, JsonRpcRequest } from "../../protocol/jsonrpc.ts";
import { ErrorCode, errorResponse, isRecord, isRequest, validateMessage } from "../../protocol/jsonrpc.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import type { ConnectionRegistry, TransportConnection } from "./connection-registry.ts";
import { Errors, rejectUpgrade } from "./errors.ts";
import { checkHandshake } from "./ws-handshake.ts";
import { jsonTextDeeperThan, tooDeepReason } from "../../common/json-depth.ts";
import { DEFAULT_MAX_JSON_DEPTH } from "../limits.ts";
import { OutboundStream } from "./outbound-stream.ts";
import type { OutboundSink } from "../http/outbound-sink.ts";
import { Acp, Header, WS_TOKEN_SUBPROTOCOL_PREFIX } from "../../protocol/acp.ts";
import type { Log } from "../../protocol/log-line.ts";

/** WebSocket close codes (RFC 6455, 7.4.1). */
export const CloseCode = {
  Normal: 1000,
  GoingAway: 1001,
  PolicyViolation: 1008,
  InternalError: 1011,
  /** The reader stopped reading and its queue hit the bound. */
  TryAgainLater: 1013,
} as const;

export interface WsProfileOptions {
  hub: ConnectionHub;
  registry: ConnectionRegistry;
  limits: ServerLimits;
  affinityCookie: string;
  log: Log;
}

/** Writes to a WebSocket, counting bytes handed to `ws` but not yet written to the socket (backpressure). */
class WebSocketSink implements OutboundSink {
  readonly #ws: WebSocket;
  readonly #socket: Duplex;
  readonly #highWater: number;
  readonly #onDrain: () => void;
  #unsent = 0;
  #full = false;
  #corked = false;

  /** `socket` is the upgraded connection under `ws`, corked around each turn's frames. */
  constructor(ws: WebSocket, socket: Duplex, highWater: number, onDrain: () => void) {
    this.#ws = ws;
    this.#socket = socket;
    this.#highWater = highWater;
    this.#onDrain = onDrain;
  }

  write(json: string): boolean {
    if (this.#ws.readyState !== this.#ws.OPEN) return true;
    // The updates of one agent read arrive in one event-loop turn: their
    // frames leave in one write (the socket is a plain stream, so its drain
    // follows whatever the cork held back).
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#socket.uncork();
      });
    }
    const bytes = Buffer.byteLength(json);
    this.#unsent += bytes;
    // The callback runs once the frame is written to the socket.
    this.#ws.send(json, () => {
      this.#unsent -= bytes;
      if (this.#full && this.#unsent < this.#highWater) {
        this.#full = false;
        this.#onDrain();
      }
    });
    this.#full = this.#unsent >= this.#highWater;
    return !this.#full;
  }

  end(): void {
    this.#ws.close(CloseCode.GoingAway, "connection ended");
  }

  abort(): void {
    this.#ws.close(CloseCode.TryAgainLater, "reader stopped reading");
    // A reader that does not read will not read the close frame either.
    this.#ws.terminate();
  }
}

type State = "awaiting-initialize" | "initializing" | "ready" | "ended";

class WsConnection implements ClientLink, TransportConnection {
  readonly connectionId: string;
  readonly principal: Principal;
  readonly profile = "websocket";
  hub: HubConnection | undefined;
  readonly #stream: OutboundStream;
  #ws: WebSocket | undefined;
  #state: State = "awaiting-initialize";
  #inbound: Promise<void> = Promise.resolve();
  /** Messages (and their bytes) received and not yet handled: the inbound queue the bounds apply to. */
  #inboundMessages = 0;
  #inboundBytes = 0;
  /** The client passed the inbound bounds: its socket is closing, further messages are dropped. */
  #flooded = false;
  #pingTimer: NodeJS.Timeout | undefined;
  /** Runs from the 101 until `initialize` arrives. */
  #initializeTimer: NodeJS.Timeout | undefined;
  readonly #log: Log;
  readonly #maxInboundMessages: number;
  readonly #maxInboundBytes: number;

  constructor(options: { connectionId: string; principal: Principal; limits: ServerLimits; log: Log }) {
    this.#log = options.log;
    this.#maxInboundMessages = options.limits.wsMaxInboundMessages;
    this.#maxInboundBytes = options.limits.wsMaxInboundBytes;
    this.connectionId = options.connectionId;
    this.principal = options.principal;
    this.#stream = new OutboundStream(options.limits);
    this.#stream.onCutOff = () => options.log(`acp: websocket ${this.connectionId} cut off: its reader stopped reading`, "warn");
  }

  send(message: JsonRpcMessage): void {
    this.#stream.push(message);
  }

  /** A WebSocket is held open by its socket, not by an idle timer. */
  isIdle(): boolean {
    return false;
  }

  attach(ws: WebSocket, socket: Duplex, limits: ServerLimits, onGone: () => void): void {
    this.#ws = ws;
    const sink = new WebSocketSink(ws, socket, limits.writeHighWaterBytes, () => this.#stream.resume());
    this.#stream.attach(sink);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) return; // Spec: binary frames are ignored.
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
      const bytes = Buffer.byteLength(text);
      if (!this.#queued(ws, bytes)) return;
      // One message at a time, in order; a failure is answered and does not stop the next.
      this.#inbound = this.#inbound
        .then(() => this.#onText(text))
        .catch((error: unknown) => {
          this.#log(`acp: websocket ${this.connectionId}: ${error instanceof Error ? error.message : String(error)}`, "warn");
          this.#protocolError(null, ErrorCode.InternalError, "internal error");
        })
        .finally(() => this.#handled(bytes));
    });
    // Liveness is the implementer's part (spec: "Durability" 7): a peer that
    // does not answer a ping within one interval is gone.
    let alive = true;
    ws.on("pong", () => {
      alive = true;
    });
    this.#pingTimer = setInterval(() => {
      if (!alive) {
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, limits.keepAliveMs);
    this.#pingTimer.unref();
    // A socket that never says initialize holds a connection (and a place
    // under maxConnections) for nothing, however well it answers pings.
    this.#initializeTimer = setTimeout(() => {
      if (this.#state !== "awaiting-initialize") return;
      this.#log(`acp: websocket ${this.connectionId} closed: no initialize within ${limits.wsInitializeTimeoutMs} ms`, "warn");
      ws.close(CloseCode.PolicyViolation, "initialize was not sent in time");
    }, limits.wsInitializeTimeoutMs);
    this.#initializeTimer.unref();
    ws.once("close", () => {
      clearInterval(this.#pingTimer);
      onGone();
      this.detach();
    });
    ws.on("error", () => {
      // Protocol errors (oversize message: 1009, bad frames) close the socket; "close" follows.
    });
  }

  /**
   * Messages wait in order while one is handled; only `initialize` makes them
   * wait long (it waits on the agent; once ready, each is handed to the hub at
   * once). A client that sends more than the bounds allow before initialize
   * is answered is flooding: it gets a 1008 close instead of growing the
   * queue. The first message always fits (its size is bounded by maxPayload).
   * Returns false when the message must not be queued.
   */
  #queued(ws: WebSocket, bytes: number): boolean {
    if (this.#flooded) return false;
    const over = this.#inboundMessages + 1 > this.#maxInboundMessages || this.#inboundBytes + bytes > this.#maxInboundBytes;
    if (this.#state !== "ready" && this.#inboundMessages > 0 && over) {
      this.#flooded = true;
      this.#log(`acp: websocket ${this.connectionId} closed: more than ${this.#maxInboundMessages} messages or ${this.#maxInboundBytes} bytes sent before initialize was answered`, "warn");
      ws.close(CloseCode.PolicyViolation, "too many messages before initialize was answered");
      return false;
    }
    this.#inboundMessages += 1;
    this.#inboundBytes += bytes;
    return true;
  }

  #handled(bytes: number): void {
    this.#inboundMessages -= 1;
    this.#inboundBytes -= bytes;
  }

  /** Messages received and not yet handled (for tests of the bound). */
  get inboundQueued(): number {
    return this.#inboundMessages;
  }

  /** 1008 with the reason first: the stream's own close (1001, "try again") then changes nothing. */
  revoke(): void {
    this.#ws?.close(CloseCode.PolicyViolation, "the credential was revoked");
    this.detach();
  }

  /** The socket closed or the server shuts down: sessions detach and stay loadable. */
  detach(): void {
    if (this.#state === "ended") return;
    this.#state = "ended";
    clearInterval(this.#pingTimer);
    clearTimeout(this.#initializeTimer);
    this.#stream.close();
    this.hub?.detach();
  }

  async #onText(text: string): Promise<void> {
    if (this.#state === "ended") return;
    // Before the parse (common/json-depth.ts); its id is not read, so the error carries id null.
    if (jsonTextDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)) {
      this.#protocolError(null, ErrorCode.InvalidRequest, tooDeepReason(DEFAULT_MAX_JSON_DEPTH));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#protocolError(null, ErrorCode.ParseError, "message is not valid JSON");
      return;
    }
    // The SDK's client answers a batch with one -32600 error; so do we.
    if (Array.isArray(value)) {
      this.#protocolError(null, ErrorCode.InvalidRequest, "JSON-RPC batches are not supported");
      return;
    }
    const checked = validateMessage(value);
    if (!checked.ok) {
      const id = isRecord(value) ? value["id"] : null;
      this.#protocolError(typeof id === "string" || typeof id === "number" ? id : null, ErrorCode.InvalidRequest, checked.reason);
      return;
    }
    const message = checked.message;
    const isInitialize = isRequest(message) && message.method === Acp.agent.initialize;

    if (this.#state === "awaiting-initialize") {
      if (!isInitialize) {
        // Spec: the first message the client sends is initialize.
        this.#protocolError(isRequest(message) ? message.id : null, ErrorCode.InvalidRequest, "the first message must be initialize");
        this.#ws?.close(CloseCode.PolicyViolation, "the first message must be initialize");
        return;
      }
      await this.#initialize(message as JsonRpcRequest);
      return;
    }
    if (isInitialize) {
      this.#protocolError((message as JsonRpcRequest).id, ErrorCode.InvalidRequest, "the connection is already initialized");
      return;
    }
    this.hub?.receive(message);
  }

  async #initialize(request: JsonRpcRequest): Promise<void> {
    this.#state = "initializing";
    clearTimeout(this.#initializeTimer);
    let response;
    try {
      response = await (this.hub as HubConnection).initialize(request);
    } catch (error) {
      this.#protocolError(request.id, ErrorCode.InternalError, error instanceof Error ? error.message : "initialize failed");
      this.#ws?.close(CloseCode.InternalError, "initialize failed");
      return;
    }
    if (this.#state !== "initializing") return;
    if (response.error !== undefined) {
      // The agent could not initialize: the client gets the error, the socket closes.
      this.send(response);
      this.#ws?.close(CloseCode.InternalError, "initialize failed");
      return;
    }
    this.#state = "ready";
    this.send(
      isRecord(response.result)
        ? { ...response, result: { ...response.result, connectionId: this.connectionId } }
        : response,
    );
  }

  #protocolError(id: JsonRpcId, code: number, message: string): void {
    this.send(errorResponse(id, code, message));
  }
}

export class WsProfile {
  readonly #options: WsProfileOptions;
  readonly #wss: WebSocketServer;
  /** Connection ids of handshakes under way, for the `headers` event. */
  readonly #handshakes = new WeakMap<IncomingMessage, string>();
  readonly #sockets = new Set<WebSocket>();

  constructor(options: WsProfileOptions) {
    this.#options = options;
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.limits.maxBodyBytes,
      // A token sent as the subprotocol `acp.bearer.<token>` is echoed back,
      // as browsers require the server to choose one of the offered protocols.
      handleProtocols: (protocols) => [...protocols].find((p) => p.startsWith(WS_TOKEN_SUBPROTOCOL_PREFIX)) ?? false,
    });
    this.#wss.on("headers", (headers, req) => {
      const connectionId = this.#handshakes.get(req);
      if (connectionId === undefined) return;
      headers.push(`${Header.ConnectionId}: ${connectionId}`, `${Header.SetCookie}: ${options.affinityCookie}`);
    });
    // `upgrade` checks what `ws` checks first (ws-handshake.ts); anything
    // `ws` refuses beyond that is answered as /acp answers, not in its HTML.
    this.#wss.on("wsClientError", (error: Error, socket: Duplex) => rejectUpgrade(socket, Errors.badHandshake(error.message)));
  }

  /** GET /acp with `Upgrade: websocket`, already authenticated as `principal`. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, principal: Principal): void {
    const { hub, registry, limits, log } = this.#options;
    const connection = new WsConnection({ connectionId: randomUUID(), principal, limits, log });
    try {
      checkHandshake(req);
      registry.assertRoom();
      const url = new URL(req.url ?? "/", "http://localhost");
      connection.hub = hub.connect(connection, { agent: url.searchParams.get("agent") ?? undefined });
    } catch (error) {
      rejectUpgrade(socket, error);
      return;
    }
    this.#handshakes.set(req, connection.connectionId);
    registry.add(connection);
    socket.once("close", () => {
      // A handshake that failed inside `ws` (a malformed subprotocol list) never reaches the callback.
      if (!this.#handshakes.has(req)) return;
      this.#handshakes.delete(req);
      registry.remove(connection);
      connection.detach();
    });
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#handshakes.delete(req);
      this.#sockets.add(ws);
      connection.attach(ws, socket, limits, () => {
        this.#sockets.delete(ws);
        registry.remove(connection);
      });
    });
  }

  /** Server shutdown: every socket closes with 1001 (going away). */
  close(): void {
    for (const ws of this.#sockets) ws.close(CloseCode.GoingAway, "server shutting down");
    this.#wss.close();
  }
}
