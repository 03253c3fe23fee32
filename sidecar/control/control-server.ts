// `acp-remote serve --control stdio`: the sidecar hosted by an editor. The
// editor speaks JSON-RPC 2.0 on our stdin/stdout with Content-Length framing
// (LSP's framing and lifecycle, so vscode-languageclient can supervise us);
// docs/control-protocol.md is the contract.
//
// Order of events: `initialize` is answered at once, then the listener starts
// and `acpRemote/serverStarted` (or `acpRemote/serverFailed`) follows. While
// it runs, status changes and session updates are pushed to the editor, and
// the editor is the hub's EditorLink. `shutdown` stops the listener, `exit`
// (or the control channel closing: the editor is gone) ends the run.
import type { Readable, Writable } from "node:stream";
import { ResponseError, createMessageConnection, type MessageConnection, type NotificationType, type RequestParam } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  ControlNotification,
  ControlRequest,
  type ControlInitOptions,
  type DeferredJobState,
  type DeviceInfo,
  type PairedDevice,
  type PromptParams,
  type ServerFailure,
  type ServerInfo,
  type StatusSnapshot,
} from "../../protocol/control.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { type HubControl, OWNER, UnknownAgentError } from "../hub/types.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { DEFAULT_CONTROL_STATUS_DEBOUNCE_MS, DEFAULT_MAX_JSON_DEPTH } from "../limits.ts";
import type { ServeOptions } from "../server/options.ts";
import { PublicUrlError, type PublicUrls } from "../http/public-url.ts";
import { serve } from "../server/serve.ts";
import { VERSION as SIDECAR_VERSION } from "../../protocol/version.ts";
import { DepthBoundReader } from "./depth-bound-reader.ts";
import { formatLogLine, type Log, type LogLevel } from "../../protocol/log-line.ts";
import { ControlEditorLink } from "./editor-link.ts";
import { ControlErrorCode, Lsp, type LspInitializeParams } from "./lsp.ts";
import { ControlParams, parseParams } from "./params.ts";

/** What the control server needs of a running listener (`serve()`'s result). */
export interface ControlledServer {
  readonly url: string;
  readonly port: number;
  readonly hub: HubControl;
  readonly auth: { setTokens(tokens: string[]): void };
  setUpstreamKey?(key: string | null): void;
  /** Paired devices, when the server keeps them. */
  readonly devices?: DeviceRegistry;
  /** The addresses people use through a proxy or tunnel, when the server keeps them. */
  readonly publicUrls?: Pick<PublicUrls, "add" | "list">;
  /** Hears every change of a deferred job's state, when the server runs them; returns an unsubscribe. */
  onJobChange?(listener: (change: { id: string; owner: string; state: DeferredJobState; at: number }) => void): () => void;
  close(): Promise<void>;
}

/** The server's paired devices: each has its own token for the server's person. */
export interface DeviceRegistry {
  list(): DeviceInfo[];
  /** Creates a device and its token (returned once, kept only as a digest). */
  pair(label: string): Promise<PairedDevice>;
  /** Unknown ids throw RpcFailure(ResourceNotFound). Closes the device's open connections. */
  revoke(deviceId: string): Promise<void>;
  /** Called when the device list or a last-use time changed. Returns an unsubscribe. */
  onChange(listener: () => void): () => void;
}

export interface ControlIo {
  input: Readable;
  output: Writable;
}

export type StartServer = (options: ServeOptions) => Promise<ControlledServer>;

/** The one place where an exception becomes a control-protocol error. */
function toResponseError(err: unknown): ResponseError<void> {
  if (err instanceof ResponseError) return err as ResponseError<void>;
  const message = err instanceof Error ? err.message : String(err);
  // The hub reports an unknown session as ACP's "resource not found"; the
  // control protocol keeps -32002 for "not running" (LSP), so it becomes -32001.
  if (err instanceof RpcFailure && err.code === ErrorCode.ResourceNotFound) return new ResponseError(ControlErrorCode.UnknownSession, message);
  if (err instanceof RpcFailure) return new ResponseError(err.code, message);
  if (err instanceof UnknownAgentError) return new ResponseError(ControlErrorCode.InvalidParams, message);
  if (err instanceof PublicUrlError) return new ResponseError(ControlErrorCode.InvalidParams, message);
  return new ResponseError(ControlErrorCode.InternalError, message);
}

/** Turns a listen error into what the person reads, with the fix. */
function describeServeFailure(err: unknown, options: ServeOptions): ServerFailure {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  const where = `${options.host}:${options.port}`;
  switch (code) {
    case "EADDRINUSE":
      return {
        code,
        message: `port ${options.port} on ${options.host} is already in use`,
        fix: `Choose another port (0 picks a free one), or stop the program that listens on ${where}.`,
      };
    case "EACCES":
      return { code, message: `not allowed to listen on ${where}`, fix: "Choose a port above 1023, or run with the rights to bind this one." };
    case "EADDRNOTAVAIL":
      return { code, message: `address ${options.host} is not an address of this machine`, fix: "Use 127.0.0.1, 0.0.0.0 or an address of this machine." };
    default:
      return { code: typeof code === "string" ? code : "ESERVE", message };
  }
}

function mergeInitOptions(base: ServeOptions, init: Partial<ControlInitOptions> | undefined): ServeOptions {
  const merged: ServeOptions = { ...base };
  const s = init?.serve;
  if (s?.host !== undefined) merged.host = s.host;
  if (s?.port !== undefined) merged.port = s.port;
  if (s?.tls === true && merged.tls === undefined) merged.tls = "self-signed";
  if (s?.tls === false) delete merged.tls;
  if (s?.agents !== undefined) merged.agents = s.agents;
  // The key follows through acpRemote/upstream/setKey: it lives in the editor's secret storage.
  if (s?.upstreamUrl) merged.upstream = { ...merged.upstream, url: s.upstreamUrl };
  // The editor's tokens are the server's person's: they replace the plain ones
  // of the command line and the environment (one the editor's own environment
  // happened to hold included); another person's labelled token stays.
  if (init?.tokens !== undefined) merged.tokens = [...init.tokens, ...merged.tokens.filter((t) => typeof t !== "string")];
  return merged;
}

function serverInfo(server: ControlledServer, options: ServeOptions): ServerInfo {
  return {
    url: server.url,
    host: options.host,
    port: server.port,
    tls: options.tls !== undefined,
    dataDir: options.dataDir,
    version: SIDECAR_VERSION,
    pid: process.pid,
    publicUrls: server.publicUrls?.list().map((u) => u.url) ?? [],
  };
}

/**
 * Runs the sidecar under an editor's control until `exit` or until the control
 * channel closes. Resolves with the process's exit code: 0 after `shutdown` +
 * `exit`, 1 otherwise (LSP's rule).
 */
export async function runControlled(
  options: ServeOptions,
  io: ControlIo = { input: process.stdin, output: process.stdout },
  start: StartServer = serve,
): Promise<number> {
  // Each line with its level: the editor writes it at that level in its log (protocol/log-line.ts).
  const log: Log = options.log ?? ((line, level = "info") => void process.stderr.write(formatLogLine(level, line) + "\n"));
  if (io.output === process.stdout) {
    // stdout carries the protocol now; a stray console.log would corrupt it.
    // What the console says goes to the log, at the level its method names.
    const toLog = (level: LogLevel) => (...args: unknown[]): void => log(args.map(String).join(" "), level);
    console.log = toLog("info");
    console.info = toLog("info");
    console.debug = toLog("debug");
    console.warn = toLog("warn");
    console.error = toLog("error");
  }

  const writer = new StreamMessageWriter(io.output);
  // Messages nested too deep are refused before any handler sees them (depth-bound-reader.ts).
  const reader = new DepthBoundReader(new StreamMessageReader(io.input), DEFAULT_MAX_JSON_DEPTH, (response) => {
    writer.write(response).catch(() => undefined);
  });
  reader.onError((error) => log(`acp-remote: control: ${error.message}`, "error"));
  const connection: MessageConnection = createMessageConnection(reader, writer);
  /**
   * Sends a notification to the editor. Called from timers and the hub's
   * events: a write that fails (the editor is gone) or a connection already
   * closed is logged, never thrown or left as an unhandled rejection, either
   * of which would end the process. Logged once until one goes through again:
   * a turn streams hundreds of updates a second.
   */
  let notifying = true;
  const sent = (): void => {
    notifying = true;
  };
  const notSent = (method: string, err: unknown): void => {
    if (!notifying) return;
    notifying = false;
    log(`acp-remote: control: ${method} not sent (nor any after it until one goes through): ${err instanceof Error ? err.message : String(err)}`, "warn");
  };
  const notify = <P>(type: NotificationType<P>, params: RequestParam<P>): void => {
    try {
      connection.sendNotification(type, params).then(sent, (err: unknown) => notSent(type.method, err));
    } catch (err) {
      notSent(type.method, err);
    }
  };

  let running: ControlledServer | undefined;
  let info: ServerInfo | undefined;
  let initOptions: Partial<ControlInitOptions> | undefined;
  let starting: Promise<void> | undefined;
  let shutdownRequested = false;
  const cleanups: Array<() => void> = [];

  const requireServer = (): ControlledServer => {
    if (!running) throw new ResponseError(ControlErrorCode.ServerNotInitialized, "the listener is not running");
    return running;
  };
  const snapshot = (): StatusSnapshot => {
    const server = requireServer();
    return { server: info ?? null, ...server.hub.status(), devices: server.devices?.list() ?? [] };
  };
  const handle = <P, R>(fn: (params: P) => R | Promise<R>) => async (params: P): Promise<R> => {
    try {
      return await fn(params);
    } catch (err) {
      throw toResponseError(err);
    }
  };
  const sessionId = (params: unknown): string => parseParams(ControlParams.session, params).sessionId;

  const stopServer = async (): Promise<void> => {
    await starting?.catch(() => undefined);
    for (const cleanup of cleanups.splice(0)) cleanup();
    const server = running;
    running = undefined;
    if (server) {
      server.hub.setEditor(undefined);
      await server.close();
    }
  };

  const startServer = async (): Promise<void> => {
    const serveOptions = mergeInitOptions({ ...options, log, hostedBy: "editor" }, initOptions);
    let server: ControlledServer;
    try {
      server = await start(serveOptions);
    } catch (err) {
      const failure = describeServeFailure(err, serveOptions);
      log(`acp-remote: the listener did not start: ${failure.message}${failure.fix ? ` (${failure.fix})` : ""}`, "error");
      notify(ControlNotification.serverFailed, failure);
      return;
    }
    if (shutdownRequested) {
      await server.close();
      return;
    }
    running = server;
    info = serverInfo(server, serveOptions);
    const hub = server.hub;
    hub.setPermissionPolicy(initOptions?.permissionPolicy ?? "both");
    const host = initOptions?.host ?? { fs: false, terminal: false };
    hub.setEditor(new ControlEditorLink(connection, host));

    // A burst of changes (a prompt turn streams) becomes one snapshot.
    let timer: NodeJS.Timeout | undefined;
    const pushStatus = (): void => {
      timer = undefined;
      if (running) notify(ControlNotification.statusChanged, snapshot());
    };
    cleanups.push(
      hub.onChange(() => {
        timer ??= setTimeout(pushStatus, DEFAULT_CONTROL_STATUS_DEBOUNCE_MS);
      }),
      server.devices?.onChange(() => {
        timer ??= setTimeout(pushStatus, DEFAULT_CONTROL_STATUS_DEBOUNCE_MS);
      }) ?? (() => undefined),
      hub.onSessionUpdate((n) => notify(ControlNotification.sessionUpdate, n)),
      hub.onTurn((event) => notify(ControlNotification.turn, event)),
      hub.onSessionState((event) => notify(ControlNotification.sessionState, event)),
      hub.onPermissionSettled((event) => notify(ControlNotification.permissionSettled, event)),
      // The editor submits deferred completions as the server's own person: it hears of those, no one else's.
      server.onJobChange?.((change) => {
        if (change.owner === OWNER.id) notify(ControlNotification.deferredChanged, { requestId: change.id, state: change.state, at: change.at });
      }) ?? (() => undefined),
      () => clearTimeout(timer),
    );
    log(`acp-remote: listening on ${info.url}`);
    notify(ControlNotification.serverStarted, info);
  };

  connection.onRequest(Lsp.initialize, (params: LspInitializeParams) => {
    initOptions = parseParams(ControlParams.initialize, params).initializationOptions ?? undefined;
    // Start after the response is on its way: serverStarted must follow it.
    setImmediate(() => {
      starting = startServer();
    });
    return { capabilities: {}, serverInfo: { name: "acp-remote", version: SIDECAR_VERSION } };
  });
  connection.onNotification(Lsp.initialized, () => undefined);

  connection.onRequest(ControlRequest.status, handle(() => snapshot()));
  connection.onRequest(ControlRequest.transcript, handle((p) => requireServer().hub.transcript(sessionId(p))));
  connection.onRequest(
    ControlRequest.cancelTurn,
    handle((p) => {
      requireServer().hub.cancelTurn(sessionId(p));
      return null;
    }),
  );
  connection.onRequest(
    ControlRequest.closeSession,
    handle((p) => {
      requireServer().hub.closeSession(sessionId(p));
      return null;
    }),
  );
  connection.onRequest(ControlRequest.newSession, handle((p) => requireServer().hub.newSession(parseParams(ControlParams.newSession, p))));
  connection.onRequest(ControlRequest.openSession, handle((p) => requireServer().hub.openSession(sessionId(p))));
  connection.onRequest(ControlRequest.prompt, handle((p) => requireServer().hub.prompt(parseParams(ControlParams.prompt, p) as PromptParams)));
  connection.onRequest(ControlRequest.setMode, handle((p) => requireServer().hub.setMode(parseParams(ControlParams.setMode, p))));
  connection.onRequest(ControlRequest.setConfigOption, handle((p) => requireServer().hub.setConfigOption(parseParams(ControlParams.setConfigOption, p))));
  connection.onRequest(ControlRequest.listSessions, handle(() => requireServer().hub.listSessions()));
  const devices = (): DeviceRegistry => {
    const registry = requireServer().devices;
    if (!registry) throw new ResponseError(ControlErrorCode.Unsupported, "this sidecar keeps no devices");
    return registry;
  };
  connection.onRequest(ControlRequest.pairDevice, handle((p) => devices().pair(parseParams(ControlParams.pairDevice, p).label)));
  connection.onRequest(ControlRequest.listDevices, handle(() => ({ devices: devices().list() })));
  connection.onRequest(
    ControlRequest.revokeDevice,
    handle(async (p) => {
      await devices().revoke(parseParams(ControlParams.revokeDevice, p).deviceId);
      return null;
    }),
  );
  connection.onRequest(
    ControlRequest.setTokens,
    handle((p) => {
      const { tokens } = parseParams(ControlParams.setTokens, p);
      requireServer().auth.setTokens(tokens);
      log(`acp-remote: access tokens replaced (${tokens.length})`);
      return null;
    }),
  );
  connection.onRequest(
    ControlRequest.setPermissionPolicy,
    handle((p) => {
      const { policy } = parseParams(ControlParams.setPermissionPolicy, p);
      if (initOptions) initOptions.permissionPolicy = policy;
      requireServer().hub.setPermissionPolicy(policy);
      return null;
    }),
  );
  connection.onRequest(
    ControlRequest.setUpstreamKey,
    handle((p) => {
      const { key } = parseParams(ControlParams.setUpstreamKey, p);
      const server = requireServer();
      if (!server.setUpstreamKey) throw new ResponseError(ControlErrorCode.Unsupported, "this sidecar has no upstream provider");
      server.setUpstreamKey(key);
      return null;
    }),
  );

  connection.onRequest(
    ControlRequest.addPublicUrl,
    handle((p) => {
      const { url } = parseParams(ControlParams.addPublicUrl, p);
      const publicUrls = requireServer().publicUrls;
      if (!publicUrls) throw new ResponseError(ControlErrorCode.Unsupported, "this sidecar keeps no public URLs");
      const known = publicUrls.list().length;
      const added = publicUrls.add(url);
      if (publicUrls.list().length > known) log(`acp-remote: public URL ${added.url} accepted (from the editor)`);
      return { publicUrls: publicUrls.list().map((u) => u.url) };
    }),
  );

  const done = new Promise<number>((resolve) => {
    let finished = false;
    const finish = (exitCode: number): void => {
      if (finished) return;
      finished = true;
      void stopServer()
        .catch((err: unknown) => log(`acp-remote: error while stopping: ${err instanceof Error ? err.message : String(err)}`, "error"))
        .finally(() => {
          connection.dispose();
          resolve(exitCode);
        });
    };
    connection.onRequest(Lsp.shutdown, async () => {
      shutdownRequested = true;
      await stopServer();
      return null;
    });
    connection.onNotification(Lsp.exit, () => finish(shutdownRequested ? 0 : 1));
    // The editor is gone (its end of the pipe closed): nobody hosts us any more.
    connection.onClose(() => finish(shutdownRequested ? 0 : 1));
  });

  connection.listen();
  const exitCode = await done;
  // Nothing more to read: let the process end even if the editor keeps its end open.
  if (io.input === process.stdin) process.stdin.destroy();
  return exitCode;
}
