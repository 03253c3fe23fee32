// One port for everything (design: decision 1). With TLS, ALPN picks h2 or
// HTTP/1.1 (`allowHTTP1`). In cleartext, a plain TCP server reads the first
// bytes of each socket: the HTTP/2 client preface means h2c with prior
// knowledge, anything else is HTTP/1.1 (which carries the WebSocket upgrade).
// The bytes are put back and the socket is handed to the matching server.
import { once } from "node:events";
import http from "node:http";
import type { IncomingMessage } from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ServerLimits } from "../server-limits.ts";
import type { HttpRequest, HttpResponse } from "./types.ts";

/** RFC 9113, 3.4: the client connection preface. */
export const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface ListenerHandlers {
  request(req: HttpRequest, res: HttpResponse): void;
  /** An HTTP/1.1 `Upgrade` request (WebSocket). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export interface ListenerOptions {
  host: string;
  port: number;
  tls?: { cert: string | Buffer; key: string | Buffer };
  limits: Pick<ServerLimits, "headersTimeoutMs" | "requestTimeoutMs" | "sniffTimeoutMs" | "closeGraceMs" | "http2IdleMs">;
  handlers: ListenerHandlers;
}

export interface Listener {
  readonly port: number;
  /** Stops accepting connections; the open ones go on (a drain). */
  stopAccepting(): void;
  /** Stops accepting, closes idle sockets, and destroys what is left after the grace period. */
  close(): Promise<void>;
}

function http1Options(limits: ListenerOptions["limits"]): http.ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    // Applies to receiving the request only: a GET whose SSE answer streams
    // for hours was received long ago, so this never cuts a stream.
    requestTimeout: limits.requestTimeoutMs,
    // The timeouts are enforced by a periodic check; run it often enough for
    // the shortest of them to matter.
    connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

export async function listen(options: ListenerOptions): Promise<Listener> {
  const { handlers, limits } = options;
  const sockets = new Set<Socket>();
  const http2Sessions = new Set<http2.Http2Session>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const trackSession = (session: http2.Http2Session) => {
    http2Sessions.add(session);
    session.once("close", () => http2Sessions.delete(session));
  };

  let front: net.Server;
  let closeInner: () => void;
  let closeIdleHttp1: () => void = () => {};

  if (options.tls !== undefined) {
    // With allowHTTP1, the secure server runs HTTP/1.1 connections through
    // node:http's machinery and honours its timeout options (untyped here).
    const secureOptions: http2.SecureServerOptions & http.ServerOptions = {
      cert: options.tls.cert,
      key: options.tls.key,
      allowHTTP1: true,
      ALPNProtocols: ["h2", "http/1.1"],
      ...http1Options(limits),
    };
    const secure = http2.createSecureServer(secureOptions);
    // Idle HTTP/2 sessions end with GOAWAY; idle HTTP/1.1 sockets are closed.
    secure.setTimeout(limits.http2IdleMs);
    secure.on("request", handlers.request);
    secure.on("upgrade", handlers.upgrade);
    secure.on("session", trackSession);
    secure.on("connection", track);
    front = secure;
    closeInner = () => {};
  } else {
    const h1 = http.createServer(http1Options(limits));
    h1.on("request", handlers.request);
    h1.on("upgrade", handlers.upgrade);
    // `http.Server` starts its timeout checks on "listening". This one never
    // listens itself (it gets its sockets from the sniffer), so it is told.
    h1.emit("listening");
    const h2 = http2.createServer();
    // HTTP/1.1 has keepAliveTimeout for idle sockets; an idle h2c session ends with GOAWAY.
    h2.setTimeout(limits.http2IdleMs);
    h2.on("request", handlers.request);
    h2.on("session", trackSession);
    const sniffer = net.createServer((socket) => {
      track(socket);
      sniff(socket, limits.sniffTimeoutMs, (isHttp2) => {
        if (isHttp2) {
          // Http2Session reads what the socket already buffered (the preface) itself.
          h2.emit("connection", socket);
          return;
        }
        h1.emit("connection", socket);
        // The HTTP/1.1 parser reads new bytes from the socket's handle and the
        // put-back bytes from the stream: resuming now flushes those on the
        // next tick, before any new read from the handle can be delivered.
        socket.resume();
      });
    });
    front = sniffer;
    closeIdleHttp1 = () => h1.closeIdleConnections();
    closeInner = () => {
      h1.close();
      h2.close();
    };
  }

  front.listen(options.port, options.host);
  await once(front, "listening");
  const address = front.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;

  let accepting = true;
  const stopAccepting = (): void => {
    if (!accepting) return;
    accepting = false;
    // Only the listening socket: the secure HTTP/2 server's own close() would
    // also send GOAWAY to every open session, which a drain must keep.
    net.Server.prototype.close.call(front);
  };
  let closing: Promise<void> | undefined;
  return {
    port,
    stopAccepting,
    close: () => {
      closing ??= (async () => {
        stopAccepting();
        // The server's own close: with TLS, it also ends its HTTP/2 sessions and idle HTTP/1.1 sockets.
        front.close();
        closeInner();
        for (const session of http2Sessions) session.close();
        closeIdleHttp1();
        if (sockets.size > 0) {
          const grace = setTimeout(() => {
            for (const session of http2Sessions) session.destroy();
            for (const socket of sockets) socket.destroy();
          }, limits.closeGraceMs);
          await Promise.all([...sockets].map((s) => (s.closed ? undefined : once(s, "close"))));
          clearTimeout(grace);
        }
      })();
      return closing;
    },
  };
}

/**
 * Reads until the bytes are known to be, or not to be, the HTTP/2 preface,
 * then puts them back and calls `handOff`. A client that sends nothing for
 * `timeoutMs` is dropped.
 */
function sniff(socket: Socket, timeoutMs: number, handOff: (isHttp2: boolean) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const onError = () => socket.destroy();
  const onData = (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const n = Math.min(buffered.length, HTTP2_PREFACE.length);
    const prefixOfPreface = buffered.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n));
    if (prefixOfPreface && buffered.length < HTTP2_PREFACE.length) return;
    clearTimeout(timer);
    socket.off("data", onData);
    socket.off("error", onError);
    socket.off("close", onClose);
    socket.pause();
    socket.unshift(buffered);
    handOff(prefixOfPreface);
  };
  const onClose = () => clearTimeout(timer);
  socket.on("data", onData);
  socket.on("error", onError);
  socket.once("close", onClose);
}
