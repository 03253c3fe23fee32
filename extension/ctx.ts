// The extension's context: its lifetime (`context.subscriptions`), the state
// the views read and the events they listen to, and when the server starts and
// stops. One run of the server (its LanguageClient and what it registered) is
// a ServerSession; the order of runs is the ServerLifecycle's. Views never
// talk to the client themselves.
import * as vscode from "vscode";
import { Trace, type LanguageClient } from "vscode-languageclient/node";
import {
  ControlRequest,
  type ControlInitOptions,
  type DeferredJobEvent,
  type ServerFailure,
  type StatusSnapshot,
  type ServerInfo,
  type SessionStateEvent,
  type TurnEvent,
} from "../protocol/control.ts";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { Config, ConfigError, SECTION } from "./config.ts";
import { TerminalHost } from "./host/terminal-host.ts";
import { PermissionCenter } from "./permissions/permission-center.ts";
import { findSidecarRuntime, RuntimeError } from "./runtime.ts";
import { ServerLifecycle } from "./server-lifecycle.ts";
import { ServerSession } from "./server-session.ts";
import { TokenStore } from "./token.ts";
import { UpstreamKeyStore } from "./upstream-key.ts";

export type ServerState = "stopped" | "starting" | "running" | "restarting" | "failed";

export class Ctx implements vscode.Disposable {
  readonly extension: vscode.ExtensionContext;
  readonly config = new Config();
  readonly log: vscode.LogOutputChannel;
  readonly tokens: TokenStore;
  readonly upstreamKey: UpstreamKeyStore;
  readonly permissions = new PermissionCenter();
  readonly terminals = new TerminalHost();

  readonly #lifecycle = new ServerLifecycle<ServerSession>(() => this.#launch());
  /**
   * The run launched last, which control requests go to: it listens (and the
   * views send requests) before the lifecycle makes it current.
   */
  #session: ServerSession | undefined;
  #state: ServerState = "stopped";
  #server: ServerInfo | undefined;
  #status: StatusSnapshot | undefined;
  #lastError: string | undefined;
  /** The access token the sidecar is (or will be) started with: a restart after a crash takes the rotated one. */
  #token: string | undefined;

  readonly #onDidChangeState = new vscode.EventEmitter<ServerState>();
  readonly #onDidChangeStatus = new vscode.EventEmitter<StatusSnapshot | undefined>();
  readonly #onSessionUpdate = new vscode.EventEmitter<SessionNotification>();
  readonly #onTurn = new vscode.EventEmitter<TurnEvent>();
  readonly #onSessionState = new vscode.EventEmitter<SessionStateEvent>();
  readonly #onDeferredJob = new vscode.EventEmitter<DeferredJobEvent>();
  readonly onDidChangeState = this.#onDidChangeState.event;
  readonly onDidChangeStatus = this.#onDidChangeStatus.event;
  readonly onSessionUpdate = this.#onSessionUpdate.event;
  /** A turn started or ended on any session, whoever prompted. */
  readonly onTurn = this.#onTurn.event;
  /** A session's modes or config options changed. */
  readonly onSessionState = this.#onSessionState.event;
  /** A deferred completion of the editor's person changed state (extension/deferred/). */
  readonly onDeferredJob = this.#onDeferredJob.event;

  constructor(extension: vscode.ExtensionContext) {
    this.extension = extension;
    this.log = vscode.window.createOutputChannel("ACP Remote", { log: true });
    this.tokens = new TokenStore(extension.secrets);
    this.upstreamKey = new UpstreamKeyStore(extension.secrets);
    extension.subscriptions.push(
      this,
      this.config,
      this.log,
      this.permissions,
      this.terminals,
      this.config.onRestartNeeded((keys) => void this.#askRestart(keys)),
      this.config.onLiveChange(() => void this.#applyLiveSettings()),
    );
  }

  get state(): ServerState {
    return this.#state;
  }
  get server(): ServerInfo | undefined {
    return this.#server;
  }
  get status(): StatusSnapshot | undefined {
    return this.#status;
  }
  get lastError(): string | undefined {
    return this.#lastError;
  }
  get sidecarPid(): number | undefined {
    return this.#server?.pid;
  }
  get isRunning(): boolean {
    return this.#state === "running";
  }

  #setState(state: ServerState, error?: string): void {
    if (error !== undefined) this.#lastError = error;
    if (state === "running") this.#lastError = undefined;
    if (state !== "running") {
      this.#server = undefined;
      this.#status = undefined;
      this.#onDidChangeStatus.fire(undefined);
    }
    this.#state = state;
    this.#onDidChangeState.fire(state);
  }

  /**
   * Starts the sidecar; resolves when its listener runs (or it failed, with a
   * message shown). A start while one is in progress (the auto-start, a
   * command) joins it: one client, one sidecar.
   */
  async start(): Promise<void> {
    await this.#lifecycle.start();
  }

  /** One run: launched, and kept only when its listener runs. */
  async #launch(): Promise<ServerSession | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("ACP Remote starts no process in an untrusted workspace. Trust the workspace to start the server.");
      return undefined;
    }
    let settings;
    let runtime;
    try {
      settings = this.config.server();
      runtime = findSidecarRuntime();
    } catch (err) {
      if (err instanceof ConfigError || err instanceof RuntimeError) {
        this.#setState("failed", err.message);
        this.log.error(err.message);
        const open = "Open Settings";
        void vscode.window.showErrorMessage(`ACP Remote: ${err.message}`, open).then((choice) => {
          if (choice === open) {
            const query = err instanceof ConfigError ? err.setting.replace(/\[\d+\].*$/, "") : SECTION;
            void vscode.commands.executeCommand("workbench.action.openSettings", query);
          }
        });
        return undefined;
      }
      throw err;
    }
    if (runtime.kind === "path") this.log.info(`This editor's Node lacks node:sqlite; the sidecar runs on ${runtime.node} (${runtime.version}).`);
    const token = await this.tokens.get();
    this.#token = token;
    this.#setState("starting");

    const session: ServerSession = new ServerSession(
      {
        extensionPath: this.extension.extensionPath,
        runtime,
        settings,
        token: () => this.#token ?? token,
        initOptions: (): ControlInitOptions => ({
          host: { fs: true, terminal: true },
          permissionPolicy: this.config.permissionPolicy,
          serve: {
            host: settings.host,
            port: settings.port,
            tls: settings.tls,
            agents: settings.agents,
            ...(settings.upstreamUrl === "" ? {} : { upstreamUrl: settings.upstreamUrl }),
          },
        }),
        ...(vscode.workspace.workspaceFolders?.[0] ? { cwd: vscode.workspace.workspaceFolders[0].uri.fsPath } : {}),
      },
      {
        log: this.log,
        permissions: this.permissions,
        terminals: this.terminals,
        onListening: (info) => {
          this.#server = info;
          this.#setState("running");
          this.log.info(`Listening on ${info.url}`);
          void this.#sendUpstreamKey();
          void this.refreshStatus();
        },
        onStatus: (snapshot) => {
          this.#status = snapshot;
          this.#onDidChangeStatus.fire(snapshot);
        },
        onSessionUpdate: (n) => this.#onSessionUpdate.fire(n),
        onTurn: (e) => this.#onTurn.fire(e),
        onSessionState: (e) => this.#onSessionState.fire(e),
        onDeferredJob: (e) => this.#onDeferredJob.fire(e),
        onCrash: (restarting) => {
          this.permissions.withdrawAll();
          this.log.warn(restarting ? "The sidecar stopped unexpectedly; restarting it." : "The sidecar stopped too often; not restarting it.");
          this.#setState(restarting ? "restarting" : "failed", "the sidecar stopped unexpectedly");
          // Given up: the run is over, and the next start launches a new one.
          if (!restarting) {
            this.#lifecycle.ended(session);
            void session.stop();
          }
        },
        onStarting: () => {
          if (this.#state !== "starting") this.#setState("starting");
        },
      },
    );
    this.#session = session;
    const outcome = await session.start();
    if ("url" in outcome) return session;
    await session.stop();
    if (outcome.code === "ESTART") {
      this.log.error(`The sidecar did not start: ${outcome.message}`);
      this.#setState("failed", outcome.message);
      void vscode.window.showErrorMessage(`ACP Remote: the server did not start: ${outcome.message}`);
    } else {
      this.#reportFailed(outcome, settings.port);
    }
    return undefined;
  }

  /** The listener did not start (its sidecar is stopped): keep the reason, tell the person (without waiting for them). */
  #reportFailed(failure: ServerFailure, port: number): void {
    const portSetting = `${SECTION}.server.port`;
    const text =
      failure.code === "EADDRINUSE"
        ? `Port ${port} is already in use. Set ${portSetting} to a free port (0 picks one), or stop the program that listens on it.`
        : `The server did not start: ${failure.message}.${failure.fix ? ` ${failure.fix}` : ""}`;
    this.#setState("failed", text);
    this.log.error(text);
    const open = "Open Settings";
    const free = "Use Any Free Port";
    void vscode.window.showErrorMessage(`ACP Remote: ${text}`, ...(failure.code === "EADDRINUSE" ? [free, open] : [open])).then(async (choice) => {
      if (choice === open) void vscode.commands.executeCommand("workbench.action.openSettings", failure.code === "EADDRINUSE" ? portSetting : SECTION);
      if (choice === free) {
        await vscode.workspace.getConfiguration(SECTION).update("server.port", 0, vscode.ConfigurationTarget.Workspace);
        await this.start();
      }
    });
  }

  async stop(): Promise<void> {
    const wasUp = this.#lifecycle.current !== undefined || this.#lifecycle.isStarting;
    await this.#lifecycle.stop();
    if (wasUp) this.#setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** The running client, for control requests; throws when the server is not running. */
  client(): LanguageClient {
    const session = this.#session;
    const client = session && !session.stopped ? session.client : undefined;
    if (!client || !this.isRunning) throw new Error("the ACP Remote server is not running");
    return client;
  }

  async refreshStatus(): Promise<void> {
    if (!this.isRunning) return;
    try {
      this.#status = await this.client().sendRequest(ControlRequest.status);
      this.#onDidChangeStatus.fire(this.#status);
    } catch (err) {
      this.log.warn(`status: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A new token reaches the running sidecar at once; otherwise it is used at the next start. */
  async rotateToken(): Promise<void> {
    const token = await this.tokens.rotate();
    this.#token = token;
    if (!this.isRunning) return;
    const client = this.client();
    // A verbose trace logs params: the token must not reach the log.
    const trace = Trace.fromString(vscode.workspace.getConfiguration(SECTION).get<string>("trace.server", "off"));
    await client.setTrace(Trace.Off);
    try {
      await client.sendRequest(ControlRequest.setTokens, { tokens: [token] });
    } finally {
      await client.setTrace(trace);
    }
  }

  /** Stores the upstream provider's key; a running sidecar with an upstream uses it at once. */
  async setUpstreamKey(key: string): Promise<void> {
    await this.upstreamKey.set(key);
    await this.#sendUpstreamKey();
  }

  async #sendUpstreamKey(): Promise<void> {
    if (!this.isRunning || this.config.server().upstreamUrl === "") return;
    const key = (await this.upstreamKey.get()) ?? null;
    const client = this.client();
    // A verbose trace logs params: the key must not reach the log.
    const trace = Trace.fromString(vscode.workspace.getConfiguration(SECTION).get<string>("trace.server", "off"));
    await client.setTrace(Trace.Off);
    try {
      await client.sendRequest(ControlRequest.setUpstreamKey, { key });
    } catch (err) {
      this.log.warn(`upstream key: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await client.setTrace(trace);
    }
  }

  async #applyLiveSettings(): Promise<void> {
    if (!this.isRunning) return;
    await this.client().sendRequest(ControlRequest.setPermissionPolicy, { policy: this.config.permissionPolicy });
    this.log.info(`Permissions are answered by: ${this.config.permissionPolicy}`);
  }

  async #askRestart(keys: string[]): Promise<void> {
    if (!this.#lifecycle.current) return;
    const restart = "Restart Server";
    const choice = await vscode.window.showInformationMessage(
      `ACP Remote: the server uses the new value of ${keys.join(", ")} after a restart.`,
      restart,
    );
    if (choice === restart) await this.restart();
  }

  dispose(): void {
    void this.#lifecycle.stop();
    this.#onDidChangeState.dispose();
    this.#onDidChangeStatus.dispose();
    this.#onSessionUpdate.dispose();
    this.#onTurn.dispose();
    this.#onSessionState.dispose();
    this.#onDeferredJob.dispose();
  }
}
