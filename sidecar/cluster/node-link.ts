// One connection from this node to another node's /acp, for one client
// connection whose session runs there (several sidecars on one shared store).
// It is a WebSocket: one socket carries every message both ways, in order, as
// the remote transport's WebSocket profile does for any client. It speaks for
// the client's person, with the cluster's key as its credential.
import WebSocket from "ws";
import { AcpExt, Acp } from "../../protocol/acp.ts";
import { type JsonRpcMessage, validateMessage } from "../../protocol/jsonrpc.ts";
import type { Principal } from "../hub/types.ts";
import { DEFAULT_NODE_LINK_OPEN_MS } from "./limits.ts";

const INITIALIZE_ID = "acp-remote-node-link-initialize";

export interface NodeLinkOptions {
  /** The other node's base URL (http: or https:), as it advertises it. */
  url: string;
  clusterKey: string;
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

  private constructor(socket: WebSocket, options: NodeLinkOptions) {
    this.#socket = socket;
    this.#options = options;
  }

  /** Opens the link and initializes it; rejects when the node cannot be reached or refuses. */
  static open(options: NodeLinkOptions): Promise<NodeLink> {
    const url = new URL("/acp", options.url.replace(/^http/, "ws"));
    if (options.agent !== undefined) url.searchParams.set("agent", options.agent);
    const onBehalfOf = Buffer.from(JSON.stringify(options.principal)).toString("base64url");
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${options.clusterKey}`, [AcpExt.onBehalfOfHeader]: onBehalfOf },
      handshakeTimeout: DEFAULT_NODE_LINK_OPEN_MS,
      // Node to node on the operator's network; a self-signed certificate of a peer node is accepted like the node's own.
      rejectUnauthorized: false,
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
        socket.on("close", (code, reason) => link.#gone(`closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ""})`));
        resolve(link);
      };
      socket.on("message", onFirst);
    });
  }

  send(message: JsonRpcMessage): void {
    if (!this.#closed && this.#socket.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(message));
  }

  /** Closes the link: on the other node the connection detaches (its sessions go on, loadable). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.close(1000);
  }

  #gone(reason: string): void {
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
