// One configured agent, supervised: spawns its command, speaks ACP with it over
// stdio (newline-delimited JSON-RPC through vscode-jsonrpc), sends `initialize`
// itself, and restarts it when it crashes. The restart policy is kept apart
// from the mechanism (see RestartPolicy), as vscode-languageclient's
// DefaultErrorHandler is: at most N restarts in a window, then `failed`.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { statSync } from "node:fs";
import { createInterface } from "node:readline";
import {
  CancellationTokenSource,
  createMessageConnection,
  Message,
  ResponseError,
  type CancellationId,
  type CancellationStrategy,
  type MessageConnection,
  type MessageStrategy,
} from "vscode-jsonrpc/node";
import type { ClientCapabilities, InitializeRequest, InitializeResponse } from "@agentclientprotocol/sdk";
import type { AgentInfo, AgentState } from "../../protocol/control.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import {
  DEFAULT_AGENT_INITIALIZE_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_RESTARTS,
  DEFAULT_AGENT_RESTART_MAX_MS,
  DEFAULT_AGENT_RESTART_MIN_MS,
  DEFAULT_AGENT_RESTART_WINDOW_MS,
  DEFAULT_AGENT_STOP_GRACE_MS,
  DEFAULT_MAX_AGENT_LINE_BYTES,
} from "../limits.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { formatCommandLine } from "./command-line.ts";
import { NdjsonMessageReader, NdjsonMessageWriter, type NotificationBatch } from "../../common/ndjson.ts";
import { RpcFailure } from "./rpc-failure.ts";
import { VERSION } from "../../protocol/version.ts";
import { RestartPolicy } from "../../common/restart-policy.ts";

export type { AgentSpec } from "../../protocol/agent-spec.ts";
export { RpcFailure } from "./rpc-failure.ts";

/** What the agent asks of its client (the hub). */
export interface AgentPeerHandler {
  /** One request of the agent (`session/request_permission`, `fs/*`, `terminal/*`, ...). Throw RpcFailure for a JSON-RPC error. */
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** One notification of the agent (`session/update`, ...). */
  notification(method: string, params: unknown): void;
}

export interface AgentProcessOptions {
  /** First restart delay, doubled per recent crash, in milliseconds. */
  restartMinMs?: number;
  /** Cap of the restart delay, in milliseconds. */
  restartMaxMs?: number;
  /** Crashes restarted within `restartWindowMs`; one more and the agent is `failed`. */
  maxRestarts?: number;
  /** The window `maxRestarts` counts in, in milliseconds. */
  restartWindowMs?: number;
  /** Time the agent has to answer `initialize`, in milliseconds. */
  initializeTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL on stop, in milliseconds. */
  stopGraceMs?: number;
  /** Longest line the agent may write on stdout, in bytes. */
  maxLineBytes?: number;
  /** Log lines: the agent's stderr and the supervisor's own events. */
  log?: (line: string) => void;
  /** Capabilities offered in `initialize`; the sidecar serves fs and terminals by default. */
  clientCapabilities?: ClientCapabilities;
  /** Reported by `info()`. */
  isDefault?: boolean;
}

/** Synthetic method of the reader's batches; never sent on the wire. */
const UPDATE_BATCH_METHOD = "$/acp-remote/notifications";
const BATCHED_NOTIFICATIONS: ReadonlySet<string> = new Set([Acp.client.session.update]);

const DEFAULT_CLIENT_CAPABILITIES: ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
};

/** Stderr lines kept to explain a crash in `lastError`. */
const STDERR_TAIL_LINES = 5;

interface Waiter {
  resolve(result: InitializeResponse): void;
  reject(error: RpcFailure): void;
}

/** One spawned process of the agent and what hangs off it. */
interface Incarnation {
  readonly child: ChildProcessWithoutNullStreams;
  readonly generation: number;
  readonly connection: MessageConnection;
  /** Requests we sent that wait for an answer: failed when the process dies. */
  readonly pending: Set<(failure: RpcFailure) => void>;
  /** Requests the agent sent that our handler is serving: aborted when the process dies. */
  readonly inbound: Set<AbortController>;
  readonly stderrTail: string[];
  exited: boolean;
  /** Why initialize failed, when it did (the process is then killed). */
  initFailure?: string;
}

export class AgentProcess {
  readonly spec: AgentSpec;
  private readonly handler: AgentPeerHandler;
  private readonly options: AgentProcessOptions;
  private readonly policy: RestartPolicy;
  private readonly log: (line: string) => void;

  private currentState: AgentState = "starting";
  private current: Incarnation | undefined;
  private gen = 0;
  private restartCount = 0;
  private lastError: string | undefined;
  private initResult: InitializeResponse | undefined;
  private started: Promise<void> | undefined;
  private launched = false;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  private readonly stateListeners = new Set<(state: AgentState) => void>();
  private readonly restartListeners = new Set<(generation: number) => void>();

  constructor(spec: AgentSpec, handler: AgentPeerHandler, options: AgentProcessOptions = {}) {
    this.spec = spec;
    this.handler = handler;
    this.options = options;
    this.policy = new RestartPolicy({
      minDelayMs: options.restartMinMs ?? DEFAULT_AGENT_RESTART_MIN_MS,
      maxDelayMs: options.restartMaxMs ?? DEFAULT_AGENT_RESTART_MAX_MS,
      maxRestarts: options.maxRestarts ?? DEFAULT_AGENT_MAX_RESTARTS,
      windowMs: options.restartWindowMs ?? DEFAULT_AGENT_RESTART_WINDOW_MS,
    });
    this.log = options.log ?? (() => {});
  }

  get state(): AgentState {
    return this.currentState;
  }

  /** +1 each time a process is spawned: sessions of an older generation are gone from the agent. */
  get generation(): number {
    return this.gen;
  }

  get initializeResult(): InitializeResponse | undefined {
    return this.initResult;
  }

  get pid(): number | undefined {
    return this.current && !this.current.exited ? this.current.child.pid : undefined;
  }

  /** Spawns the agent and initializes it; resolves once it runs, rejects when it cannot be started. */
  start(): Promise<void> {
    if (!this.launched) {
      this.launched = true;
      this.launch();
    }
    this.started ??= this.ready().then(() => undefined);
    return this.started;
  }

  /**
   * Resolves when the agent runs (waiting across a restart); rejects when it is
   * stopped or failed. An agent not started yet is started.
   */
  ready(): Promise<InitializeResponse> {
    if (!this.launched && this.currentState === "starting") void this.start().catch(() => undefined);
    if (this.currentState === "running" && this.initResult) return Promise.resolve(this.initResult);
    if (this.currentState === "failed" || this.currentState === "stopped") return Promise.reject(this.unavailable());
    return new Promise<InitializeResponse>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Sends one request to the agent. Waits for a restart in progress. The agent's
   * error answers become RpcFailure with its code and message; the death of the
   * process fails the request with -32603. Aborting `signal` sends ACP
   * `$/cancel_request`; the agent still answers (cancellation is cooperative).
   */
  async request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    if (this.currentState !== "running") await this.ready();
    const incarnation = this.current;
    if (!incarnation || incarnation.exited) throw this.unavailable();
    return this.send(incarnation, method, params, signal);
  }

  /** Sends one notification; dropped (and logged) when no process runs. */
  notify(method: string, params: unknown): void {
    const incarnation = this.current;
    if (this.currentState !== "running" || !incarnation || incarnation.exited) {
      this.log(`agent ${this.spec.name}: ${method} dropped, the agent is ${this.currentState}`);
      return;
    }
    incarnation.connection.sendNotification(method, params).catch((error: unknown) => {
      this.log(`agent ${this.spec.name}: sending ${method} failed: ${(error as Error).message}`);
    });
  }

  onStateChange(listener: (state: AgentState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** After a crash, once the new process is initialized. */
  onRestart(listener: (generation: number) => void): () => void {
    this.restartListeners.add(listener);
    return () => this.restartListeners.delete(listener);
  }

  info(): AgentInfo {
    const info: AgentInfo = {
      name: this.spec.name,
      command: formatCommandLine([this.spec.command, ...this.spec.args]),
      state: this.currentState,
      restarts: this.restartCount,
      isDefault: this.options.isDefault ?? false,
    };
    const pid = this.pid;
    if (pid !== undefined) info.pid = pid;
    if (this.lastError !== undefined) info.lastError = this.lastError;
    return info;
  }

  /** Ends the agent for good: stdin closed, SIGTERM to its process group, SIGKILL after the grace period. */
  async stop(): Promise<void> {
    if (this.currentState === "stopped") return;
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const incarnation = this.current;
    if (incarnation && !incarnation.exited) {
      const exited = waitForExit(incarnation.child);
      incarnation.child.stdin.end();
      signalGroup(incarnation.child, "SIGTERM");
      const grace = this.options.stopGraceMs ?? DEFAULT_AGENT_STOP_GRACE_MS;
      let timer: NodeJS.Timeout | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          signalGroup(incarnation.child, "SIGKILL");
          resolve();
        }, grace);
      });
      await Promise.race([exited, killed]);
      clearTimeout(timer);
      await exited;
    }
    this.setState("stopped");
  }

  // --- mechanism ---------------------------------------------------------

  private launch(): void {
    const { name, command, args } = this.spec;
    const cwd = this.spec.cwd;
    if (cwd !== undefined && !isDirectory(cwd)) {
      this.fail(`agent ${name}: cannot start ${JSON.stringify(command)}: the working folder ${cwd} does not exist`);
      return;
    }
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, args, {
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so that stop() and crashes end the agent's
        // children too (kill(-pid)).
        detached: true,
        env: { ...process.env, ...this.spec.env },
        ...(cwd !== undefined ? { cwd } : {}),
      });
    } catch (error) {
      this.fail(spawnErrorMessage(name, command, error));
      return;
    }
    this.gen++;
    const generation = this.gen;
    const reader = new NdjsonMessageReader(child.stdout, {
      maxLineBytes: this.options.maxLineBytes ?? DEFAULT_MAX_AGENT_LINE_BYTES,
      batchNotifications: { method: UPDATE_BATCH_METHOD, of: BATCHED_NOTIFICATIONS },
    });
    const writer = new NdjsonMessageWriter(child.stdin);
    const inboundSources = new Map<CancellationId, CancellationTokenSource>();
    const connection = createMessageConnection(reader, writer, {
      error: (message) => this.log(`agent ${name}: ${message}`),
      warn: (message) => this.log(`agent ${name}: ${message}`),
      info: () => {},
      log: () => {},
    }, {
      cancellationStrategy: acpCancellationStrategy(inboundSources),
      messageStrategy: acpCancelReceiver(inboundSources),
    });
    const incarnation: Incarnation = {
      child,
      generation,
      connection,
      pending: new Set(),
      inbound: new Set(),
      stderrTail: [],
      exited: false,
    };
    this.current = incarnation;

    reader.onError((error) => this.log(`agent ${name}: ${error.message}`));
    writer.onError(([error]) => this.log(`agent ${name}: write failed: ${error.message}`));
    connection.onRequest((method: string, params: unknown, token) => this.serveInbound(incarnation, method, params, token));
    const notify = (method: string, params: unknown): void => {
      try {
        this.handler.notification(method, params);
      } catch (error) {
        this.log(`agent ${name}: handling ${method} failed: ${(error as Error).message}`);
      }
    };
    connection.onNotification((method: string, params: unknown) => {
      // The updates of one read, in one event-loop turn (see NdjsonReaderOptions).
      if (method === UPDATE_BATCH_METHOD) for (const m of (params as NotificationBatch).messages) notify(m.method, m.params);
      else notify(method, params);
    });
    connection.listen();

    child.stderr.on("error", (error) => this.log(`agent ${name}: stderr: ${error.message}`));
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (line) => {
      incarnation.stderrTail.push(line);
      if (incarnation.stderrTail.length > STDERR_TAIL_LINES) incarnation.stderrTail.shift();
      this.log(`[${name}] ${line}`);
    });

    let spawnFailed = false;
    child.once("error", (error) => {
      // Emitted instead of `spawn` when the command cannot be run (ENOENT,
      // EACCES); a failure to spawn is not retried, it would fail again.
      if (child.pid === undefined) {
        spawnFailed = true;
        incarnation.exited = true;
        this.failPending(incarnation, spawnErrorMessage(name, command, error));
        connection.dispose();
        this.fail(spawnErrorMessage(name, command, error));
      } else {
        this.log(`agent ${name}: ${error.message}`);
      }
    });
    child.once("spawn", () => {
      this.log(`agent ${name}: started pid ${child.pid} (generation ${generation})`);
      void this.initialize(incarnation);
    });
    child.once("exit", (code, signal) => {
      if (spawnFailed) return;
      this.onExit(incarnation, code, signal);
    });
  }

  private async initialize(incarnation: Incarnation): Promise<void> {
    const params: InitializeRequest = {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: this.options.clientCapabilities ?? DEFAULT_CLIENT_CAPABILITIES,
      clientInfo: { name: "acp-remote", version: VERSION },
    };
    const timeoutMs = this.options.initializeTimeoutMs ?? DEFAULT_AGENT_INITIALIZE_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    let result: unknown;
    try {
      result = await Promise.race([
        this.send(incarnation, Acp.agent.initialize, params),
        new Promise<never>((_, reject) =>
          timeout.addEventListener("abort", () => reject(RpcFailure.internal(`did not answer initialize within ${timeoutMs} ms`)), { once: true }),
        ),
      ]);
    } catch (error) {
      if (incarnation.exited) return; // onExit tells the story.
      const failure = RpcFailure.from(error);
      incarnation.initFailure = `agent ${this.spec.name}: initialize failed: ${failure.message}`;
      this.log(incarnation.initFailure);
      // Counted as a crash: the exit that follows goes through the restart policy.
      signalGroup(incarnation.child, "SIGKILL");
      return;
    }
    if (incarnation.exited || this.current !== incarnation) return;
    if (!isRecord(result) || typeof result["protocolVersion"] !== "number") {
      incarnation.initFailure = `agent ${this.spec.name}: initialize answered without a protocolVersion`;
      this.log(incarnation.initFailure);
      signalGroup(incarnation.child, "SIGKILL");
      return;
    }
    this.initResult = result as InitializeResponse;
    if (this.stopping) return;
    this.setState("running");
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.resolve(this.initResult);
    if (incarnation.generation > 1) for (const listener of [...this.restartListeners]) listener(incarnation.generation);
  }

  private send(incarnation: Incarnation, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const fail = (failure: RpcFailure): void => reject(failure);
      incarnation.pending.add(fail);
      const source = new CancellationTokenSource();
      const onAbort = (): void => source.cancel();
      if (signal?.aborted) source.cancel();
      else signal?.addEventListener("abort", onAbort, { once: true });
      const settle = (): void => {
        incarnation.pending.delete(fail);
        signal?.removeEventListener("abort", onAbort);
        source.dispose();
      };
      incarnation.connection.sendRequest(method, params, source.token).then(
        (result) => {
          settle();
          resolve(result);
        },
        (error: unknown) => {
          settle();
          reject(error instanceof ResponseError ? new RpcFailure(error.code, error.message, error.data) : RpcFailure.from(error));
        },
      );
    });
  }

  private async serveInbound(incarnation: Incarnation, method: string, params: unknown, token: { isCancellationRequested: boolean; onCancellationRequested: (listener: () => void) => { dispose(): void } }): Promise<unknown> {
    const controller = new AbortController();
    incarnation.inbound.add(controller);
    const subscription = token.onCancellationRequested(() => controller.abort(new RpcFailure(ErrorCode.RequestCancelled, "the agent cancelled the request")));
    if (token.isCancellationRequested) controller.abort(new RpcFailure(ErrorCode.RequestCancelled, "the agent cancelled the request"));
    try {
      const result = await this.handler.request(method, params, controller.signal);
      return result === undefined ? null : result;
    } catch (error) {
      // The one place where a host failure becomes the agent's JSON-RPC error.
      const failure = RpcFailure.from(error);
      throw new ResponseError(failure.code, failure.message, failure.data);
    } finally {
      subscription.dispose();
      incarnation.inbound.delete(controller);
    }
  }

  private onExit(incarnation: Incarnation, code: number | null, signal: NodeJS.Signals | null): void {
    incarnation.exited = true;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = incarnation.stderrTail.length > 0 ? ` (stderr: ${incarnation.stderrTail.at(-1)})` : "";
    const message = `agent ${this.spec.name} ${how}`;
    this.failPending(incarnation, message);
    for (const controller of incarnation.inbound) controller.abort(RpcFailure.internal(message));
    incarnation.connection.dispose();
    // Children the agent left behind in its group go with it.
    signalGroup(incarnation.child, "SIGKILL");
    if (this.current !== incarnation) return;
    if (this.stopping) {
      this.log(`${message} (stopped)`);
      return;
    }
    // An initialize failure already said why the process was killed.
    this.lastError = incarnation.initFailure ?? `${message}${tail}`;
    this.log(this.lastError);
    const decision = this.policy.onCrash(Date.now());
    if (!decision.restart) {
      this.fail(`${this.lastError}; gave up after ${this.policy.maxRestarts} restarts within ${Math.round(this.policy.windowMs / 1000)} s`);
      return;
    }
    const delay = decision.delayMs;
    this.setState("restarting");
    this.log(`agent ${this.spec.name}: restarting in ${delay} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.restartCount++;
      this.launch();
    }, delay);
  }

  private failPending(incarnation: Incarnation, message: string): void {
    const pending = [...incarnation.pending];
    incarnation.pending.clear();
    for (const fail of pending) fail(RpcFailure.internal(message));
  }

  private fail(message: string): void {
    this.lastError = message;
    this.log(message);
    this.setState("failed");
  }

  private unavailable(): RpcFailure {
    if (this.currentState === "stopped") return RpcFailure.internal(`agent ${this.spec.name} is stopped`);
    return RpcFailure.internal(this.lastError ?? `agent ${this.spec.name} is ${this.currentState}`);
  }

  private setState(state: AgentState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    if (state === "failed" || state === "stopped") {
      const waiters = this.waiters;
      this.waiters = [];
      const failure = this.unavailable();
      for (const waiter of waiters) waiter.reject(failure);
    }
    for (const listener of [...this.stateListeners]) listener(state);
  }
}

/**
 * ACP names its cancellation `$/cancel_request` with `{ requestId }` (LSP says
 * `$/cancelRequest` with `{ id }`). Outbound: an aborted request sends the ACP
 * form. Inbound: every request's token source is kept by id so that
 * acpCancelReceiver can cancel it.
 */
function acpCancellationStrategy(sources: Map<CancellationId, CancellationTokenSource>): CancellationStrategy {
  return {
    receiver: {
      createCancellationTokenSource(id: CancellationId) {
        const source = new CancellationTokenSource();
        sources.set(id, source);
        return source;
      },
    },
    sender: {
      sendCancellation(connection, id) {
        return connection.sendNotification(Acp.protocol.cancelRequest, { requestId: id });
      },
      cleanup() {},
    },
  };
}

/** Turns an incoming `$/cancel_request` into the cancellation of the request's token, and forgets tokens of finished requests. */
function acpCancelReceiver(sources: Map<CancellationId, CancellationTokenSource>): MessageStrategy {
  return {
    handleMessage(message, next) {
      if (Message.isNotification(message) && message.method === Acp.protocol.cancelRequest) {
        const params = message.params;
        const id = isRecord(params) ? params["requestId"] : undefined;
        if (typeof id === "string" || typeof id === "number") sources.get(id)?.cancel();
        return;
      }
      const result = next(message);
      if (Message.isRequest(message)) {
        const id = message.id;
        const forget = (): void => {
          if (id !== null) sources.delete(id);
        };
        if (result instanceof Promise) result.then(forget, forget);
        else forget();
      }
      return result;
    },
  };
}

function signalGroup(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

function waitForExit(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function spawnErrorMessage(name: string, command: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `agent ${name}: cannot start ${JSON.stringify(command)}: command not found`;
  if (code === "EACCES") return `agent ${name}: cannot start ${JSON.stringify(command)}: permission denied`;
  return `agent ${name}: cannot start ${JSON.stringify(command)}: ${(error as Error).message}`;
}
