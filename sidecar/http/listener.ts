// One port for everything (design: decision 1). With TLS, ALPN picks h2 or
// HTTP/1.1 (`allowHTTP1`). In cleartext, a plain TCP server reads the first
// bytes of each socket: the HTTP/2 client preface means h2c with prior
// knowledge, anything else is HTTP/1.1 (which carries the WebSocket upgrade).
// The bytes are put back and the socket is handed to the matching server.
// The listener bounds what a client can hold: sockets (maxSockets), HTTP/2
// streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS) and the time to
// receive a request (request-deadline.ts); what node:http would answer on
// its own (417, and its 400/408/413/431 on bytes it cannot parse) goes to the
// handlers, so that every answer has the server's JSON body.
import { once } from "node:events";
import http from "node:http";
import type { IncomingMessage } from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ServerLimits } from "./server-limits.ts";
import { markCutOff, watchHttp2Body } from "./request-deadline.ts";
import { destroyWhenReset } from "./stream-reset.ts";
import type { HttpRequest, HttpResponse } from "./types.ts";

/** RFC 9113, 3.4: the client connection preface. */
export const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** What node:http answers bytes it cannot take as a request with (its `socketOnError`). */
export type ParserRefusal = 400 | 408 | 413 | 431;

export interface ListenerHandlers {
  request(req: HttpRequest, res: HttpResponse): void;
  /** An HTTP/1.1 `Upgrade` request (WebSocket). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** A request with an `Expect` other than 100-continue: answer 417. */
  expectationFailed(req: HttpRequest, res: HttpResponse): void;
  /** A request whose body did not all arrive within requestTimeoutMs: answer 408; the listener then ends the request. */
  requestTimeout(req: HttpRequest, res: HttpResponse): void;
  /** HTTP/1.1 bytes refused before there was a request to route (malformed, too large, too slow): answer on the bare socket and close it. */
  parserRefusal(socket: Duplex, status: ParserRefusal): void;
}

export interface ListenerOptions {
  host: string;
  port: number;
  tls?: { cert: string | Buffer; key: string | Buffer };
  limits: Pick<
    ServerLimits,
    "headersTimeoutMs" | "requestTimeoutMs" | "sniffTimeoutMs" | "closeGraceMs" | "http2IdleMs" | "http2MaxConcurrentStreams" | "maxSockets"
  >;
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

/** node:http's answer to each parser error (`socketOnError`); anything else is 400. */
function parserRefusal(code: string | undefined): ParserRefusal {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return 408;
    case "HPE_HEADER_OVERFLOW":
      return 431;
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return 413;
    default:
      return 400;
  }
}

export async function listen(options: ListenerOptions): Promise<Listener> {
  const { handlers, limits } = options;
  const http2Settings: http2.Settings = { maxConcurrentStreams: limits.http2MaxConcurrentStreams };

  // The HTTP/1.1 request each socket is receiving or answering: node:http's
  // requestTimeout names only the socket, and the 408 is the route's to write.
  const http1InFlight = new WeakMap<Duplex, { req: IncomingMessage; res: HttpResponse }>();
  const track1 = (req: IncomingMessage, res: HttpResponse): void => {
    const entry = { req, res };
    http1InFlight.set(req.socket, entry);
    res.once("close", () => {
      if (http1InFlight.get(req.socket) === entry) http1InFlight.delete(req.socket);
    });
  };
  /** Every request enters here, whichever server took it; HTTP/2 ones get their deadline, and go when their client resets them. */
  const admit = (handle: (req: HttpRequest, res: HttpResponse) => void) => (req: HttpRequest, res: HttpResponse): void => {
    if (req.httpVersionMajor >= 2) {
      watchHttp2Body(req as http2.Http2ServerRequest, res, limits.requestTimeoutMs, handlers.requestTimeout);
      destroyWhenReset((req as http2.Http2ServerRequest).stream);
    } else {
      track1(req as IncomingMessage, res);
    }
    handle(req, res);
  };
  const onRequest = admit(handlers.request);
  const onExpectation = admit(handlers.expectationFailed);
  // node:http (HTTP/1.1, on both ports) hands its parser errors and timeouts here instead of answering them itself.
  const onClientError = (error: NodeJS.ErrnoException, socket: Duplex): void => {
    const open = http1InFlight.get(socket);
    if (!socket.writable || open?.res.headersSent === true) {
      socket.destroy();
      return;
    }
    const status = parserRefusal(error.code);
    if (status === 408 && open !== undefined && !open.req.complete) {
      // The body did not arrive in time: the route answers, then the socket closes (the rest is not read).
      markCutOff(open.req);
      open.res.setHeader("connection", "close");
      handlers.requestTimeout(open.req, open.res);
      if (open.res.writableEnded) open.res.once("finish", () => socket.destroy());
      else socket.destroy();
      return;
    }
    handlers.parserRefusal(socket, status);
  };
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
      settings: http2Settings,
      ...http1Options(limits),
    };
    const secure = http2.createSecureServer(secureOptions);
    // Idle HTTP/2 sessions end with GOAWAY; idle HTTP/1.1 sockets are closed.
    secure.setTimeout(limits.http2IdleMs);
    secure.on("request", onRequest);
    secure.on("checkExpectation", onExpectation);
    secure.on("clientError", onClientError);
    secure.on("upgrade", handlers.upgrade);
    secure.on("session", trackSession);
    secure.on("connection", track);
    front = secure;
    closeInner = () => {};
  } else {
    const h1 = http.createServer(http1Options(limits));
    h1.on("request", onRequest);
    h1.on("checkExpectation", onExpectation);
    h1.on("clientError", onClientError);
    h1.on("upgrade", handlers.upgrade);
    // `http.Server` starts its timeout checks on "listening". This one never
    // listens itself (it gets its sockets from the sniffer), so it is told.
    h1.emit("listening");
    const h2 = http2.createServer({ settings: http2Settings });
    // HTTP/1.1 has keepAliveTimeout for idle sockets; an idle h2c session ends with GOAWAY.
    h2.setTimeout(limits.http2IdleMs);
    h2.on("request", onRequest);
    h2.on("checkExpectation", onExpectation);
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

  // Past the cap node:net closes each new socket as soon as it is accepted.
  // The count is the front server's, so in cleartext it holds both protocols.
  front.maxConnections = limits.maxSockets;
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
