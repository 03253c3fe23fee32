// `acp-remote serve --control stdio` as an editor starts it: a child process
// (`node sidecar/cli/main.ts serve --control stdio --stdio`) driven with
// vscode-jsonrpc over its stdio (Content-Length framing), its stderr kept.
// Resolves once `acpRemote/serverStarted` (or `serverFailed`) arrived.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ControlNotification, type ControlInitOptions, type ServerFailure, type ServerInfo } from "../../protocol/control.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { CLI, NODE } from "./connect-child.ts";

export interface ControlChild {
  child: ChildProcessWithoutNullStreams;
  connection: MessageConnection;
  /** The listener's start: its info, or why it failed. */
  started: ServerInfo | ServerFailure;
  dataDir: string;
  /** Shutdown and exit, as the editor ends it; then its data folder goes. */
  stop(): Promise<void>;
}

export interface ControlChildOptions {
  /** The access token of the server's person. */
  token: string;
  /** initializationOptions.serve: the agents (none runs the embedded demo), host, port. */
  serve?: ControlInitOptions["serve"];
  env?: Record<string, string>;
  /** A data folder prepared by the test (it is removed at stop()); a new one otherwise. */
  dataDir?: string;
  /** Arguments of `serve` besides the control ones (e.g. another person's `--token`). */
  args?: string[];
  /** initializationOptions.permissionPolicy: who is asked ("client" when absent). */
  permissionPolicy?: ControlInitOptions["permissionPolicy"];
  /** Called with the sidecar's stderr before anything is written to it. */
  onStderr?: (stderr: ChildProcessWithoutNullStreams["stderr"]) => void;
}

export async function spawnControlled(options: ControlChildOptions): Promise<ControlChild> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "acp-control-child-"));
  const child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", dataDir, "--stdio", `--clientProcessId=${process.pid}`, ...(options.args ?? [])], {
    env: { ...process.env, ACP_REMOTE_TOKEN: "", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  options.onStderr?.(child.stderr);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
    connection.onNotification(ControlNotification.serverStarted, resolve);
    connection.onNotification(ControlNotification.serverFailed, resolve);
  });
  connection.listen();
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      await connection.sendRequest(Lsp.shutdown).catch(() => undefined);
      await connection.sendNotification(Lsp.exit).catch(() => undefined);
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(killer);
    }
    connection.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await connection.sendRequest(Lsp.initialize, {
      processId: process.pid,
      // The token on the control channel, as the editor sends it.
      initializationOptions: { host: { fs: false, terminal: false }, permissionPolicy: options.permissionPolicy ?? "client", tokens: [options.token], serve: { host: "127.0.0.1", port: 0, ...options.serve } },
    });
    await connection.sendNotification(Lsp.initialized, {});
    return { child, connection, started: await started, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
