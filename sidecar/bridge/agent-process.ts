// One configured agent, supervised: spawns its command (agent-incarnation.ts
// wires its stdio as an ACP connection), sends `initialize` itself, and
// restarts it when it crashes. The restart policy is kept apart from the
// mechanism (common/restart-policy.ts), as vscode-languageclient's
// DefaultErrorHandler is: at most N restarts in a window, then `failed`.
import type { ClientCapabilities, InitializeRequest, InitializeResponse } from "@agentclientprotocol/sdk";
import type { AgentInfo, AgentState } from "../../protocol/control.ts";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import {
  DEFAULT_AGENT_INITIALIZE_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_RESTARTS,
  DEFAULT_AGENT_RESTART_MAX_MS,
  DEFAULT_AGENT_RESTART_MIN_MS,
  DEFAULT_AGENT_RESTART_WINDOW_MS,
  DEFAULT_AGENT_STOP_GRACE_MS,
  DEFAULT_AGENT_STOP_KILL_WAIT_MS,
  DEFAULT_MAX_AGENT_LINE_BYTES,
} from "../limits.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { formatCommandLine } from "./command-line.ts";
import { failPending, sendRequest, spawnErrorMessage, spawnIncarnation, type Incarnation } from "./agent-incarnation.ts";
import { isDirectory, signalGroup, stopProcessGroup } from "./process-group.ts";
import { AgentGone } from "./agent-gone.ts";
import { listen } from "../../common/listeners.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { VERSION } from "../../protocol/version.ts";
import { RestartPolicy } from "../../common/restart-policy.ts";
import { agentClientCapabilities } from "../agents/adaptations.ts";
import type { Log } from "../../protocol/log-line.ts";

export type { AgentSpec } from "../../protocol/agent-spec.ts";
export { RpcFailure } from "../../common/rpc-failure.ts";

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
  /** Time stop() waits for the exit after SIGKILL, in milliseconds. */
  stopKillWaitMs?: number;
  /** Longest line the agent may write on stdout, in bytes. */
  maxLineBytes?: number;
  /** Log lines: the agent's stderr and the supervisor's own events. */
  log?: Log;
  /** Capabilities offered in `initialize`; the sidecar serves fs and terminals by default. */
  clientCapabilities?: ClientCapabilities;
  /** Reported by `info()`. */
  isDefault?: boolean;
}

const DEFAULT_CLIENT_CAPABILITIES: ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
};

interface Waiter {
  resolve(result: InitializeResponse): void;
  reject(error: RpcFailure): void;
}

export class AgentProcess {
  readonly spec: AgentSpec;
  private readonly handler: AgentPeerHandler;
  private readonly options: AgentProcessOptions;
  private readonly policy: RestartPolicy;
  private readonly log: Log;

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
    return sendRequest(incarnation, method, params, signal);
  }

  /** Sends one notification; dropped (and logged) when no process runs. */
  notify(method: string, params: unknown): void {
    const incarnation = this.current;
    if (this.currentState !== "running" || !incarnation || incarnation.exited) {
      this.log(`agent ${this.spec.name}: ${method} dropped, the agent is ${this.currentState}`, "debug");
      return;
    }
    // Callers are event listeners (an aborted /v1 request, a client gone) and
    // timers: a failure is logged, never thrown. The connection throws at once
    // when the agent closed its stdout but has not exited yet.
    const failed = (error: unknown): void => this.log(`agent ${this.spec.name}: sending ${method} failed: ${(error as Error).message}`, "warn");
    try {
      incarnation.connection.sendNotification(method, params).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  onStateChange(listener: (state: AgentState) => void): () => void {
    return listen(this.stateListeners, listener);
  }

  /** After a crash, once the new process is initialized. */
  onRestart(listener: (generation: number) => void): () => void {
    return listen(this.restartListeners, listener);
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

  /**
   * Ends the agent for good: stdin closed, SIGTERM to its process group,
   * SIGKILL after the grace period, and a bounded wait for the exit after
   * that: an agent that ignores all of it cannot hold up a shutdown.
   */
  async stop(): Promise<void> {
    if (this.currentState === "stopped") return;
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const incarnation = this.current;
    if (incarnation && !incarnation.exited) {
      const exited = await stopProcessGroup(incarnation.child, {
        graceMs: this.options.stopGraceMs ?? DEFAULT_AGENT_STOP_GRACE_MS,
        killWaitMs: this.options.stopKillWaitMs ?? DEFAULT_AGENT_STOP_KILL_WAIT_MS,
      });
      if (!exited) this.log(`agent ${this.spec.name}: pid ${incarnation.child.pid} did not exit after SIGKILL; stopped without waiting for it`, "warn");
    }
    this.setState("stopped");
  }

  // --- mechanism ---------------------------------------------------------

  private launch(): void {
    const { name, command, cwd } = this.spec;
    if (cwd !== undefined && !isDirectory(cwd)) {
      this.fail(`agent ${name}: cannot start ${JSON.stringify(command)}: the working folder ${cwd} does not exist`);
      return;
    }
    let incarnation: Incarnation;
    try {
      incarnation = spawnIncarnation(this.spec, this.gen + 1, this.options.maxLineBytes ?? DEFAULT_MAX_AGENT_LINE_BYTES, {
        log: this.log,
        request: (method, params, signal) => this.handler.request(method, params, signal),
        notification: (method, params) => this.handler.notification(method, params),
        spawned: (spawned) => {
          this.log(`agent ${name}: started pid ${spawned.child.pid} (generation ${spawned.generation})`);
          void this.initialize(spawned);
        },
        // A failure to spawn is not retried: it would fail again.
        spawnFailed: (_failed, message) => this.fail(message),
        exited: (exited, code, signal) => this.onExit(exited, code, signal),
      });
    } catch (error) {
      this.fail(spawnErrorMessage(name, command, error));
      return;
    }
    this.gen = incarnation.generation;
    this.current = incarnation;
  }

  private async initialize(incarnation: Incarnation): Promise<void> {
    const params: InitializeRequest = {
      protocolVersion: PROTOCOL_VERSION,
      // What a published agent needs offered otherwise is one of its adaptations (sidecar/agents/adaptations.ts).
      clientCapabilities: agentClientCapabilities(this.spec, this.options.clientCapabilities ?? DEFAULT_CLIENT_CAPABILITIES),
      clientInfo: { name: "acp-remote", version: VERSION },
    };
    const timeoutMs = this.options.initializeTimeoutMs ?? DEFAULT_AGENT_INITIALIZE_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let result: unknown;
    try {
      result = await Promise.race([
        sendRequest(incarnation, Acp.agent.initialize, params),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(RpcFailure.internal(`did not answer initialize within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      if (incarnation.exited) return; // onExit tells the story.
      const failure = RpcFailure.from(error);
      incarnation.initFailure = `agent ${this.spec.name}: initialize failed: ${failure.message}`;
      this.log(incarnation.initFailure, "error");
      // Counted as a crash: the exit that follows goes through the restart policy.
      signalGroup(incarnation.child, "SIGKILL");
      return;
    } finally {
      // The deadline goes with the answer: an agent restarted often leaves no timers behind.
      clearTimeout(timer);
    }
    if (incarnation.exited || this.current !== incarnation) return;
    if (!isRecord(result) || typeof result["protocolVersion"] !== "number") {
      incarnation.initFailure = `agent ${this.spec.name}: initialize answered without a protocolVersion`;
      this.log(incarnation.initFailure, "error");
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

  private onExit(incarnation: Incarnation, code: number | null, signal: NodeJS.Signals | null): void {
    incarnation.exited = true;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = incarnation.stderrTail.length > 0 ? ` (stderr: ${incarnation.stderrTail.at(-1)})` : "";
    const message = `agent ${this.spec.name} ${how}`;
    // Its own kind of failure: what waited on the process was cut off, not answered (agent-gone.ts).
    const gone = new AgentGone(message, this.stopping);
    failPending(incarnation, gone);
    for (const controller of incarnation.inbound) controller.abort(gone);
    incarnation.connection.dispose();
    // Children the agent left behind in its group go with it.
    signalGroup(incarnation.child, "SIGKILL");
    if (this.current !== incarnation) return;
    if (this.stopping) {
      this.log(`${message} (stopped)`, "info");
      return;
    }
    // An initialize failure already said why the process was killed.
    this.lastError = incarnation.initFailure ?? `${message}${tail}`;
    this.log(this.lastError, "warn");
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

  private fail(message: string): void {
    this.lastError = message;
    this.log(message, "error");
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
