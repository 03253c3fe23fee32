// A TCP proxy between a client and a server, to make the network fail on
// purpose: `cut()` drops every open connection (both ends see a reset), and
// `block()` makes new connections fail until `unblock()`, as an unreachable
// server does.
import net from "node:net";

export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted: () => number;
  cut(): void;
  /** Stops carrying bytes on the open connections without closing them: a network gone silent. */
  freeze(): void;
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let blocked = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (blocked) {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
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
