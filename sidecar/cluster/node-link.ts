// One connection from this node to another node's /acp, for one client
// connection whose session runs there (several sidecars on one shared store).
// It is a WebSocket: one socket carries every message both ways, in order, as
// the remote transport's WebSocket profile does for any client. It speaks for
// the client's person, with a claim signed with the node secret as its
// credential (node-claim.ts). Over TLS the other node's certificate is
// checked like any server's, against the node CA when one is configured.
// It pings the other node: a peer that stops answering (a hung process, a
// network that drops packets without a reset) ends the link, and the
// client's requests there get an error instead of waiting forever.
import WebSocket from "ws";
import { AcpExt, Acp } from "../../protocol/acp.ts";
import { type JsonRpcMessage, validateMessage } from "../../protocol/jsonrpc.ts";
import type { Principal } from "../hub/types.ts";
import { DEFAULT_NODE_LINK_OPEN_MS, DEFAULT_NODE_LINK_PING_MS, DEFAULT_NODE_LINK_PING_TIMEOUT_MS } from "./limits.ts";
import { signNodeClaim } from "./node-claim.ts";

const INITIALIZE_ID = "acp-remote-node-link-initialize";

/** Thrown by `send` when the link is gone: the caller answers the request with the "node gone" error. */
class NodeLinkClosedError extends Error {
  constructor(url: string) {
    super(`the link to node ${url} is closed`);
    this.name = "NodeLinkClosedError";
  }
}

export interface NodeLinkOptions {
  /** The other node's base URL (http: or https:), as it advertises it. */
  url: string;
  /** The secret every node has from its configuration (ACP_REMOTE_NODE_SECRET). */
  nodeSecret: string;
  /** This node's id, and the other node's: the claim names both. */
  from: string;
  to: string;
  /** PEM certificates the other node's TLS certificate must chain to (--node-ca); the system's CAs when absent. */
  ca?: string;
  principal: Principal;
  /** `/acp?agent=NAME` of the client's connection, when it named one. */
  agent?: string;
  /** The client's own `initialize` params, so the other node offers it the same host requests. */
  initialize: unknown;
  onMessage(message: JsonRpcMessage): void;
  /** The link is gone (the other node stopped, or the network dropped). */
  onClose(reason: string): void;
}

export class NodeLink {
  readonly #socket: WebSocket;
  readonly #options: NodeLinkOptions;
  #closed = false;
  /** Why the link was ended from this side (a ping unanswered, a failed send), for the "gone" report. */
  #lost: string | undefined;
  #pinger: NodeJS.Timeout | undefined;
  #awaitingPong: NodeJS.Timeout | undefined;

  private constructor(socket: WebSocket, options: NodeLinkOptions) {
    this.#socket = socket;
    this.#options = options;
  }

  /** Opens the link and initializes it; rejects when the node cannot be reached or refuses. */
  static open(options: NodeLinkOptions): Promise<NodeLink> {
    const url = new URL("/acp", options.url.replace(/^http/, "ws"));
    if (options.agent !== undefined) url.searchParams.set("agent", options.agent);
    const claim = signNodeClaim(options.nodeSecret, { from: options.from, to: options.to, principal: options.principal });
    const socket = new WebSocket(url, {
      headers: { [AcpExt.onBehalfOfHeader]: claim },
      handshakeTimeout: DEFAULT_NODE_LINK_OPEN_MS,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
    return new Promise((resolve, reject) => {
      const fail = (why: string): void => {
        socket.terminate();
        reject(new Error(`node ${options.url} cannot be reached: ${why}`));
      };
      const timer = setTimeout(() => fail("no answer to initialize"), DEFAULT_NODE_LINK_OPEN_MS);
      socket.once("error", (error) => {
        clearTimeout(timer);
        fail(error.message);
      });
      socket.once("unexpected-response", (_req, res) => {
        clearTimeout(timer);
        fail(`HTTP ${res.statusCode}`);
      });
      socket.once("open", () => {
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: INITIALIZE_ID, method: Acp.agent.initialize, params: options.initialize ?? {} }));
      });
      const onFirst = (data: WebSocket.RawData): void => {
        const parsed = parse(data);
        if (parsed === undefined || !("id" in parsed) || parsed.id !== INITIALIZE_ID) return;
        socket.off("message", onFirst);
        clearTimeout(timer);
        if ("error" in parsed && parsed.error) return fail(`initialize failed: ${parsed.error.message}`);
        const link = new NodeLink(socket, options);
        socket.removeAllListeners("error");
        socket.on("error", () => undefined);
        socket.on("message", (raw) => {
          const message = parse(raw);
          if (message !== undefined) options.onMessage(message);
        });
        socket.on("close", (code, reason) => link.#gone(link.#lost ?? `closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ""})`));
        link.#watch();
        resolve(link);
      };
      socket.on("message", onFirst);
    });
  }

  /** Sends one message; throws NodeLinkClosedError when the link is gone, so that no request waits for an answer that cannot come. */
  send(message: JsonRpcMessage): void {
    if (this.#closed || this.#socket.readyState !== WebSocket.OPEN) throw new NodeLinkClosedError(this.#options.url);
    this.#socket.send(JSON.stringify(message), (error) => {
      if (error !== undefined && error !== null) this.#fail(`a message could not be sent: ${error.message}`);
    });
  }

  /** Closes the link: on the other node the connection detaches (its sessions go on, loadable). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pinger);
    clearTimeout(this.#awaitingPong);
    this.#socket.close(1000);
  }

  /** Liveness, as the client's WebSocket transport does it: a ping unanswered within the deadline ends the link. */
  #watch(): void {
    this.#pinger = setInterval(() => {
      if (this.#socket.readyState !== WebSocket.OPEN || this.#awaitingPong !== undefined) return;
      this.#awaitingPong = setTimeout(() => this.#fail(`no answer to a ping within ${DEFAULT_NODE_LINK_PING_TIMEOUT_MS} ms`), DEFAULT_NODE_LINK_PING_TIMEOUT_MS);
      this.#awaitingPong.unref();
      this.#socket.ping();
    }, DEFAULT_NODE_LINK_PING_MS);
    this.#pinger.unref();
    this.#socket.on("pong", () => {
      clearTimeout(this.#awaitingPong);
      this.#awaitingPong = undefined;
    });
  }

  /** Ends the link from this side; `close` follows at once (terminate), and reports it gone. */
  #fail(why: string): void {
    if (this.#closed) return;
    this.#lost ??= why;
    this.#socket.terminate();
  }

  #gone(reason: string): void {
    clearInterval(this.#pinger);
    clearTimeout(this.#awaitingPong);
    if (this.#closed) return;
    this.#closed = true;
    this.#options.onClose(reason);
  }
}

function parse(data: WebSocket.RawData): JsonRpcMessage | undefined {
  try {
    const checked = validateMessage(JSON.parse(data.toString()) as unknown);
    return checked.ok ? checked.message : undefined;
  } catch {
    return undefined;
  }
}
