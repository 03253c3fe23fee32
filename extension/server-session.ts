// One run of the sidecar: its LanguageClient, the handlers it registered (the
// server's cleanup scope), and the outcome of its start. Ctx keeps the
// extension's lifetime and decides when a run starts and ends
// (server-lifecycle.ts); a run knows nothing of the others.
import * as vscode from "vscode";
import { State, type LanguageClient } from "vscode-languageclient/node";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import {
  ControlHostRequest,
  ControlNotification,
  HostMethod,
  type DeferredJobEvent,
  type ServerFailure,
  type ServerInfo,
  type SessionStateEvent,
  type StatusSnapshot,
  type TurnEvent,
} from "../protocol/control.ts";
import { DEFAULT_SIDECAR_STOP_TIMEOUT_MS } from "./limits.ts";
import { readTextFile, writeTextFile } from "./host/fs-host.ts";
import type { TerminalHost } from "./host/terminal-host.ts";
import type { PermissionCenter } from "./permissions/permission-center.ts";
import type { ServerRun } from "./server-lifecycle.ts";
import { createSidecarClient, SidecarErrorHandler, type SidecarClientOptions } from "./sidecar-client.ts";

/** What a run reports to the extension, and the hosts it serves requests with. */
export interface ServerSessionHooks {
  log: vscode.LogOutputChannel;
  permissions: PermissionCenter;
  terminals: TerminalHost;
  onListening(info: ServerInfo): void;
  onStatus(snapshot: StatusSnapshot): void;
  onSessionUpdate(notification: SessionNotification): void;
  onTurn(event: TurnEvent): void;
  onSessionState(event: SessionStateEvent): void;
  /** A deferred completion of the editor's person changed state. */
  onDeferredJob(event: DeferredJobEvent): void;
  /** The sidecar crashed; `restarting` says whether it is started again. */
  onCrash(restarting: boolean): void;
  /** The client (re)starts the sidecar process. */
  onStarting(): void;
}

/** What the run's client is started with; the run adds its log and its crash handler. */
export type ServerSessionOptions = Omit<SidecarClientOptions, "log" | "errorHandler">;

export class ServerSession implements ServerRun {
  readonly client: LanguageClient;
  readonly #hooks: ServerSessionHooks;
  readonly #scope: vscode.Disposable[] = [];
  readonly #outcome: Promise<ServerInfo | ServerFailure>;
  #settle: (outcome: ServerInfo | ServerFailure) => void = () => undefined;
  #stopped: Promise<void> | undefined;

  constructor(options: ServerSessionOptions, hooks: ServerSessionHooks) {
    this.#hooks = hooks;
    this.#outcome = new Promise((resolve) => (this.#settle = resolve));
    this.client = createSidecarClient({
      ...options,
      log: hooks.log,
      errorHandler: new SidecarErrorHandler((restarting) => {
        hooks.onCrash(restarting);
        // Given up before the listener ever ran: the start is over too.
        if (!restarting) this.#settle({ code: "ECRASHED", message: "the sidecar stopped during start-up; see ACP Remote: Show Log" });
      }),
    });
    this.#registerHandlers();
  }

  /** Starts the sidecar; resolves when its listener runs, or with why it did not. */
  async start(): Promise<ServerInfo | ServerFailure> {
    try {
      await this.client.start();
    } catch (err) {
      return { code: "ESTART", message: err instanceof Error ? err.message : String(err) };
    }
    return this.#outcome;
  }

  #registerHandlers(): void {
    const client = this.client;
    const hooks = this.#hooks;
    this.#scope.push(
      client.onNotification(ControlNotification.serverStarted, (info) => {
        hooks.onListening(info);
        this.#settle(info);
      }),
      client.onNotification(ControlNotification.serverFailed, (failure) => this.#settle(failure)),
      client.onNotification(ControlNotification.statusChanged, (snapshot) => hooks.onStatus(snapshot)),
      client.onNotification(ControlNotification.sessionUpdate, (n) => hooks.onSessionUpdate(n)),
      client.onNotification(ControlNotification.turn, (e) => hooks.onTurn(e)),
      client.onNotification(ControlNotification.sessionState, (e) => hooks.onSessionState(e)),
      client.onNotification(ControlNotification.deferredChanged, (e) => hooks.onDeferredJob(e)),
      client.onRequest(ControlHostRequest.requestPermission, (info, token) => hooks.permissions.ask(info, token)),
      client.onNotification(ControlNotification.permissionSettled, (event) => hooks.permissions.resolved(event)),
      client.onRequest(HostMethod.readTextFile, (p) => readTextFile(p)),
      client.onRequest(HostMethod.writeTextFile, (p) => writeTextFile(p)),
      client.onRequest(HostMethod.terminalCreate, (p) => hooks.terminals.create(p)),
      client.onRequest(HostMethod.terminalOutput, (p) => hooks.terminals.output(p)),
      client.onRequest(HostMethod.terminalWaitForExit, (p) => hooks.terminals.waitForExit(p)),
      client.onRequest(HostMethod.terminalKill, (p) => hooks.terminals.kill(p)),
      client.onRequest(HostMethod.terminalRelease, (p) => hooks.terminals.release(p)),
      client.onDidChangeState((e) => {
        if (e.newState === State.Starting) hooks.onStarting();
      }),
    );
  }

  /** Whether stop() was called: the client must not be used any more. */
  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  /** Ends the run: its handlers, its pending permission requests, its process. Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      for (const d of this.#scope.splice(0)) d.dispose();
      this.#hooks.permissions.withdrawAll();
      try {
        if (this.client.isRunning()) await this.client.stop(DEFAULT_SIDECAR_STOP_TIMEOUT_MS);
      } catch (err) {
        this.#hooks.log.warn(`Stopping the sidecar: ${err instanceof Error ? err.message : String(err)}`);
      }
      await this.client.dispose().catch(() => undefined);
    })();
    return this.#stopped;
  }
}
