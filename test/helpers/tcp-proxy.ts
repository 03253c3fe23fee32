// A TCP proxy between a client and a server, to make the network fail on
// purpose: `cut()` drops every open connection (both ends see a reset), and
// `block()` makes new connections fail until `unblock()`, as an unreachable
// server does. `cutWhere()` drops only the HTTP/1.1 connections whose last
// request head matches, as a proxy that times out one long-lived GET does.
import net from "node:net";

export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted: () => number;
  cut(): void;
  /** Resets the connections whose latest HTTP/1.1 request head (as the client sent it) matches; how many. */
  cutWhere(match: (requestHead: string) => boolean): number;
  /** Stops carrying bytes on the open connections without closing them: a network gone silent. */
  freeze(): void;
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

/**
 * `http1Only`: the proxy refuses the h2c preface the way an HTTP/1.1 server
 * does (400, close), so clients that try h2c first fall back to HTTP/1.1.
 */
export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1", options: { http1Only?: boolean } = {}): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  /** Per client socket: its upstream, and the head of the last request it sent. */
  const pairs = new Map<net.Socket, { upstream: net.Socket; head: string }>();
  let blocked = false;
  let accepted = 0;
  const bridge = (client: net.Socket, first?: Buffer): void => {
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const pair = { upstream, head: "" };
    pairs.set(client, pair);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      pairs.delete(client);
    };
    const noteHead = (chunk: Buffer): void => {
      if (/^(GET|POST|DELETE|PUT) /.test(chunk.toString("latin1", 0, 8))) pair.head = chunk.toString("latin1", 0, 4096).split("\r\n\r\n")[0] ?? "";
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
  const server = net.createServer((client) => {
    if (blocked) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
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
    freeze() {
      for (const socket of open) {
        socket.unpipe();
        socket.pause();
      }
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
