// The extension's context: owns the sidecar's lifecycle and two cleanup
// scopes, the extension's lifetime (`context.subscriptions`) and the server's
// lifetime (what one LanguageClient registered). Views read state from here
// and listen to its events; they never talk to the client themselves.
import * as vscode from "vscode";
import { State, Trace, type LanguageClient } from "vscode-languageclient/node";
import {
  ControlHostRequest,
  ControlNotification,
  ControlRequest,
  HostMethod,
  type ControlInitOptions,
  type ServerFailure,
  type ServerInfo,
  type StatusSnapshot,
  type Transcript,
} from "../protocol/control.ts";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { Config, ConfigError, SECTION } from "./config.ts";
import { readTextFile, writeTextFile } from "./host/fs-host.ts";
import { TerminalHost } from "./host/terminal-host.ts";
import { PermissionCenter } from "./permissions/permission-center.ts";
import { findSidecarRuntime, RuntimeError } from "./runtime.ts";
import { createSidecarClient, RestartPolicy } from "./sidecar-client.ts";
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

  #client: LanguageClient | undefined;
  #serverScope: vscode.Disposable[] = [];
  #state: ServerState = "stopped";
  #server: ServerInfo | undefined;
  #status: StatusSnapshot | undefined;
  #lastError: string | undefined;

  readonly #onDidChangeState = new vscode.EventEmitter<ServerState>();
  readonly #onDidChangeStatus = new vscode.EventEmitter<StatusSnapshot | undefined>();
  readonly #onSessionUpdate = new vscode.EventEmitter<SessionNotification>();
  readonly onDidChangeState = this.#onDidChangeState.event;
  readonly onDidChangeStatus = this.#onDidChangeStatus.event;
  readonly onSessionUpdate = this.#onSessionUpdate.event;

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

  /** Starts the sidecar; resolves when its listener runs (or it failed, with a message shown). */
  async start(): Promise<void> {
    if (this.#client) return;
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("ACP Remote starts no process in an untrusted workspace. Trust the workspace to start the server.");
      return;
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
        return;
      }
      throw err;
    }
    if (runtime.kind === "path") this.log.info(`This editor's Node lacks node:sqlite; the sidecar runs on ${runtime.node} (${runtime.version}).`);
    const token = await this.tokens.get();
    this.#setState("starting");

    const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
      const client = createSidecarClient({
        extensionPath: this.extension.extensionPath,
        runtime,
        settings,
        token,
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
        log: this.log,
        errorHandler: new RestartPolicy((restarting) => {
          this.permissions.withdrawAll();
          this.log.warn(restarting ? "The sidecar stopped unexpectedly; restarting it." : "The sidecar stopped too often; not restarting it.");
          this.#setState(restarting ? "restarting" : "failed", "the sidecar stopped unexpectedly");
          // Given up before the listener ever ran: the start is over too.
          if (!restarting) resolve({ code: "ECRASHED", message: "the sidecar stopped during start-up; see ACP Remote: Show Log" });
        }),
        ...(vscode.workspace.workspaceFolders?.[0] ? { cwd: vscode.workspace.workspaceFolders[0].uri.fsPath } : {}),
      });
      this.#client = client;
      this.#registerHandlers(client, resolve);
    });
    try {
      await this.#client!.start();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`The sidecar did not start: ${message}`);
      await this.#disposeClient();
      this.#setState("failed", message);
      void vscode.window.showErrorMessage(`ACP Remote: the server did not start: ${message}`);
      return;
    }
    const outcome = await started;
    if ("url" in outcome) return;
    await this.#stopFailed(outcome, settings.port);
  }

  #registerHandlers(client: LanguageClient, firstStart: (outcome: ServerInfo | ServerFailure) => void): void {
    const scope = this.#serverScope;
    scope.push(
      client.onNotification(ControlNotification.serverStarted, (info) => {
        this.#server = info;
        this.#setState("running");
        this.log.info(`Listening on ${info.url}`);
        firstStart(info);
        void this.#sendUpstreamKey();
        void this.refreshStatus();
      }),
      client.onNotification(ControlNotification.serverFailed, (failure) => firstStart(failure)),
      client.onNotification(ControlNotification.statusChanged, (snapshot) => {
        this.#status = snapshot;
        this.#onDidChangeStatus.fire(snapshot);
      }),
      client.onNotification(ControlNotification.sessionUpdate, (n) => this.#onSessionUpdate.fire(n)),
      client.onRequest(ControlHostRequest.requestPermission, (info, token) => this.permissions.ask(info, token)),
      client.onRequest(HostMethod.readTextFile, (p) => readTextFile(p)),
      client.onRequest(HostMethod.writeTextFile, (p) => writeTextFile(p)),
      client.onRequest(HostMethod.terminalCreate, (p) => this.terminals.create(p)),
      client.onRequest(HostMethod.terminalOutput, (p) => this.terminals.output(p)),
      client.onRequest(HostMethod.terminalWaitForExit, (p) => this.terminals.waitForExit(p)),
      client.onRequest(HostMethod.terminalKill, (p) => this.terminals.kill(p)),
      client.onRequest(HostMethod.terminalRelease, (p) => this.terminals.release(p)),
      client.onDidChangeState((e) => {
        if (e.newState === State.Starting && this.#state !== "starting") this.#setState("starting");
      }),
    );
  }

  /** The listener did not start: stop the idle sidecar, keep the reason, tell the person (without waiting for them). */
  async #stopFailed(failure: ServerFailure, port: number): Promise<void> {
    await this.#disposeClient();
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

  async #disposeClient(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    for (const d of this.#serverScope.splice(0)) d.dispose();
    this.permissions.withdrawAll();
    if (client) {
      try {
        if (client.isRunning()) await client.stop(10_000);
      } catch (err) {
        this.log.warn(`Stopping the sidecar: ${err instanceof Error ? err.message : String(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    if (!this.#client) return;
    await this.#disposeClient();
    this.#setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** The running client, for control requests; throws when the server is not running. */
  client(): LanguageClient {
    const client = this.#client;
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

  transcript(sessionId: string): Promise<Transcript> {
    return this.client().sendRequest(ControlRequest.transcript, { sessionId });
  }

  /** A new token reaches the running sidecar at once; otherwise it is used at the next start. */
  async rotateToken(): Promise<void> {
    const token = await this.tokens.rotate();
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
    if (!this.#client) return;
    const restart = "Restart Server";
    const choice = await vscode.window.showInformationMessage(
      `ACP Remote: the server uses the new value of ${keys.join(", ")} after a restart.`,
      restart,
    );
    if (choice === restart) await this.restart();
  }

  dispose(): void {
    void this.#disposeClient();
    this.#onDidChangeState.dispose();
    this.#onDidChangeStatus.dispose();
    this.#onSessionUpdate.dispose();
  }
}
