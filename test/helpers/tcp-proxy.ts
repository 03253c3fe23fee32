// A TCP proxy between a client and a server, to make the network fail on
// purpose: `cut()` drops every open connection (both ends see a reset), and
// `block()` makes new connections fail until `unblock()`, as an unreachable
// server does; `freeze()` stops carrying bytes on the open connections, and
// `silence()` on new ones too, as a server that is up and does not answer.
// `cutWhere()` drops only the HTTP/1.1 connections whose last request head
// matches, as a proxy that times out one long-lived GET does;
// `endClientWhere()` and `freezeWhere()` do to such a connection what a proxy
// that timed it out, or a network that went silent, does while the server has
// not seen it go.
import net from "node:net";

export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted: () => number;
  cut(): void;
  /** Resets the connections whose latest HTTP/1.1 request head (as the client sent it) matches; how many. */
  cutWhere(match: (requestHead: string) => boolean): number;
  /**
   * Ends (FIN) the client side of the matching connections once what was
   * carried is delivered, and carries nothing more; the server side stays
   * open and hears nothing of it. How many.
   */
  endClientWhere(match: (requestHead: string) => boolean): number;
  /** Stops carrying bytes on the matching connections without closing either side; how many. */
  freezeWhere(match: (requestHead: string) => boolean): number;
  /** What the server has sent on the matching connections since their latest request (the first 64 KiB), latin1. */
  answeredWhere(match: (requestHead: string) => boolean): string[];
  /** Stops carrying bytes on the open connections without closing them: a network gone silent. */
  freeze(): void;
  /** freeze(), and new connections are accepted and then held without a byte either way: a peer that hangs. */
  silence(): void;
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

/**
 * `http1Only`: the proxy refuses the h2c preface the way an HTTP/1.1 server
 * does (400, close), so clients that try h2c first fall back to HTTP/1.1.
 * `targetPort` may be a function, read at each connection, for a target that
 * gets its port after the proxy is made (a node that advertises the proxy).
 */
export async function startTcpProxy(targetPort: number | (() => number), targetHost = "127.0.0.1", options: { http1Only?: boolean } = {}): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  /** Per client socket: its upstream, the head of the last request it sent, and what the server sent since (the start of it). */
  const pairs = new Map<net.Socket, { upstream: net.Socket; head: string; answered: string; drop: () => void }>();
  let blocked = false;
  let silent = false;
  let accepted = 0;
  const bridge = (client: net.Socket, first?: Buffer): void => {
    const upstream = net.connect(typeof targetPort === "number" ? targetPort : targetPort(), targetHost);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      pairs.delete(client);
    };
    const pair = { upstream, head: "", answered: "", drop };
    pairs.set(client, pair);
    upstream.on("data", (chunk: Buffer) => {
      if (pair.answered.length < 65_536) pair.answered += chunk.toString("latin1");
    });
    const noteHead = (chunk: Buffer): void => {
      if (!/^(GET|POST|DELETE|PUT) /.test(chunk.toString("latin1", 0, 8))) return;
      pair.head = chunk.toString("latin1", 0, 4096).split("\r\n\r\n")[0] ?? "";
      // What the server sends from now on answers this request.
      pair.answered = "";
    };
    client.on("data", noteHead);
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
    if (first !== undefined) {
      noteHead(first);
      upstream.write(first);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const freeze = (): void => {
    for (const socket of open) {
      socket.unpipe();
      socket.pause();
    }
  };
  const server = net.createServer((client) => {
    if (blocked) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    if (silent) {
      client.on("error", () => {});
      client.pause();
      open.add(client);
      return;
    }
    if (options.http1Only !== true) return bridge(client);
    client.on("error", () => {});
    client.once("data", (first: Buffer) => {
      if (first.toString("latin1", 0, 14) === "PRI * HTTP/2.0") {
        client.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      client.pause();
      bridge(client, first);
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    accepted: () => accepted,
    cut() {
      for (const socket of open) {
        try {
          socket.resetAndDestroy();
        } catch {
          socket.destroy();
        }
      }
      open.clear();
    },
    cutWhere(match) {
      let cut = 0;
      for (const [client, pair] of pairs) {
        if (!match(pair.head)) continue;
        cut++;
        client.resetAndDestroy();
        pair.upstream.resetAndDestroy();
      }
      return cut;
    },
    endClientWhere(match) {
      let ended = 0;
      for (const [client, pair] of pairs) {
        if (!match(pair.head)) continue;
        ended++;
        pair.upstream.unpipe(client);
        client.unpipe(pair.upstream);
        // The server side outlives the client side: its end does not take the other along.
        client.off("close", pair.drop);
        client.off("error", pair.drop);
        client.on("error", () => {});
        pairs.delete(client);
        client.end();
      }
      return ended;
    },
    freezeWhere(match) {
      let frozen = 0;
      for (const [client, pair] of pairs) {
        if (!match(pair.head)) continue;
        frozen++;
        for (const socket of [client, pair.upstream]) {
          socket.unpipe();
          socket.pause();
        }
      }
      return frozen;
    },
    answeredWhere(match) {
      return [...pairs.values()].filter((pair) => match(pair.head)).map((pair) => pair.answered);
    },
    freeze,
    silence() {
      silent = true;
      freeze();
    },
    block() {
      blocked = true;
    },
    unblock() {
      blocked = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
