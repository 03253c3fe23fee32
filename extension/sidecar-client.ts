// Starting and supervising the sidecar process with vscode-languageclient:
// the server options (which module, which runtime), the access token in
// `initialize`, and the restart policy, kept apart from the mechanism.
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  TransportKind,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { ControlInitOptions } from "../protocol/control.ts";
import { RestartPolicy } from "../common/restart-policy.ts";
import { DEFAULT_SIDECAR_MAX_RESTARTS, DEFAULT_SIDECAR_RESTART_WINDOW_MS } from "./limits.ts";
import { forwardSidecarStderr } from "./sidecar-log.ts";
import type { ServerSettings } from "./config.ts";
import type { SidecarRuntime } from "./runtime.ts";

const CLIENT_ID = "acpRemote";
export const CLIENT_NAME = "ACP Remote sidecar";

/**
 * The LanguageClient's error handler: a crashed sidecar is restarted as the
 * shared restart policy (common/restart-policy.ts) says, at most
 * DEFAULT_SIDECAR_MAX_RESTARTS times within DEFAULT_SIDECAR_RESTART_WINDOW_MS;
 * one more crash and it stays down with a message that says how to start it again.
 */
export class SidecarErrorHandler implements ErrorHandler {
  readonly #policy: RestartPolicy;
  readonly #onCrash: (restarting: boolean) => void;

  constructor(onCrash: (restarting: boolean) => void, policy = new RestartPolicy({ maxRestarts: DEFAULT_SIDECAR_MAX_RESTARTS, windowMs: DEFAULT_SIDECAR_RESTART_WINDOW_MS })) {
    this.#onCrash = onCrash;
    this.#policy = policy;
  }

  error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
    // A few write errors can be a hiccup; many mean the pipe is gone.
    return { action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
  }

  closed(): CloseHandlerResult {
    // The client restarts at once: the policy here has no delay (minDelayMs 0).
    const decision = this.#policy.onCrash(Date.now());
    this.#onCrash(decision.restart);
    if (decision.restart) return { action: CloseAction.Restart, handled: true };
    return {
      action: CloseAction.DoNotRestart,
      message: `The ACP Remote sidecar stopped ${decision.crashes} times in ${Math.round(this.#policy.windowMs / 60_000)} minutes and was not restarted. See the log (ACP Remote: Show Log), then run ACP Remote: Start Server.`,
    };
  }
}

export interface SidecarClientOptions {
  extensionPath: string;
  runtime: SidecarRuntime;
  settings: ServerSettings;
  /** The access token now: each start of the sidecar (a restart after a crash too) is sent the current one. */
  token: () => string;
  initOptions: () => ControlInitOptions;
  log: vscode.LogOutputChannel;
  errorHandler: ErrorHandler;
  cwd?: string;
}

/**
 * The sidecar's client. The access token travels in `initialize`, whose params
 * a verbose trace (`acpRemote.trace.server`) writes into the log: the trace
 * shows the token redacted.
 */
class SidecarLanguageClient extends LanguageClient {
  #secret: (() => string) | undefined;

  constructor(serverOptions: ServerOptions, clientOptions: LanguageClientOptions, secret: () => string) {
    super(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.#secret = secret;
  }

  override trace(message: string, data?: unknown): void {
    const secret = this.#secret?.() ?? "";
    const redact = (text: string): string => (secret === "" ? text : text.split(secret).join("<redacted>"));
    super.trace(redact(message), typeof data === "string" ? redact(data) : data);
  }
}

export function createSidecarClient(o: SidecarClientOptions): LanguageClient {
  const module = vscode.Uri.joinPath(vscode.Uri.file(o.extensionPath), "dist", "cli.mjs").fsPath;
  // No token in the environment: every agent and terminal the sidecar starts
  // would inherit it. It goes on the control channel, which only the two of us hold.
  const run = {
    module,
    args: ["serve", "--control", "stdio"],
    transport: TransportKind.stdio,
    ...(o.runtime.kind === "path" ? { runtime: o.runtime.node } : {}),
    ...(o.cwd ? { options: { cwd: o.cwd } } : {}),
  };
  const serverOptions: ServerOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [],
    outputChannel: o.log,
    // Our own messages say what went wrong; the log is one command away.
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // stderr is the sidecar's log, each line at its level. stdout carries the
    // control protocol (TransportKind.stdio): this handler is never given it.
    stdioOptions: { stdout: () => undefined, stderr: (input, channel) => forwardSidecarStderr(input, channel) },
    initializationOptions: (): ControlInitOptions => ({ ...o.initOptions(), tokens: [o.token()] }),
    errorHandler: o.errorHandler,
    // A failed handshake is not retried: it would fail the same way.
    initializationFailedHandler: () => false,
  };
  return new SidecarLanguageClient(serverOptions, clientOptions, o.token);
}
