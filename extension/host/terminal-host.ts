// ACP `terminal/*` served in VS Code's terminal panel. Each command runs in a
// Pseudoterminal that we drive, so its output is both shown to the person
// and kept (bounded) for `terminal/output`, and its exit is known exactly.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type {
  CreateTerminalRequest,
  CreateTerminalResponse,
  TerminalExitStatus,
  TerminalOutputRequest,
  TerminalOutputResponse,
} from "@agentclientprotocol/sdk";
import { DEFAULT_MAX_TERMINALS_PER_SESSION, DEFAULT_TERMINAL_KILL_GRACE_MS, DEFAULT_TERMINAL_OUTPUT_BYTES } from "../../protocol/host-limits.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { childEnvironment } from "../../common/child-environment.ts";
import { workspacePath } from "./workspace-paths.ts";

/** Keeps the last `limit` bytes of output, cut at a character boundary (ACP: terminal/output). */
class OutputBuffer {
  #text = "";
  #bytes = 0;
  truncated = false;
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  append(chunk: string): void {
    this.#text += chunk;
    this.#bytes += Buffer.byteLength(chunk);
    if (this.#bytes <= this.#limit) return;
    const buffer = Buffer.from(this.#text);
    let start = buffer.byteLength - this.#limit;
    // Skip UTF-8 continuation bytes so the kept text starts on a character.
    while (start < buffer.byteLength && (buffer[start]! & 0xc0) === 0x80) start++;
    this.#text = buffer.subarray(start).toString("utf8");
    this.#bytes = buffer.byteLength - start;
    this.truncated = true;
  }

  get text(): string {
    return this.#text;
  }
}

class HostTerminal {
  readonly id = `term_${randomUUID()}`;
  readonly sessionId: string;
  readonly output: OutputBuffer;
  exitStatus: TerminalExitStatus | undefined;
  readonly exited: Promise<TerminalExitStatus>;
  readonly #child: ChildProcess;
  readonly #write = new vscode.EventEmitter<string>();
  readonly #close = new vscode.EventEmitter<number | void>();
  readonly terminal: vscode.Terminal;

  constructor(params: CreateTerminalRequest, cwd: string) {
    this.sessionId = params.sessionId;
    this.output = new OutputBuffer(params.outputByteLimit ?? DEFAULT_TERMINAL_OUTPUT_BYTES);
    // acp-remote's own variables stay with the editor: the agent's command gets the rest, and what it asks for.
    const env = childEnvironment(Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])));
    const args = params.args ?? [];
    // Without args the command is a shell line (ACP clients send both forms).
    this.#child =
      args.length > 0
        ? spawn(params.command, args, { cwd, env, detached: process.platform !== "win32" })
        : spawn(params.command, { cwd, env, shell: true, detached: process.platform !== "win32" });
    const commandLine = [params.command, ...args].join(" ");
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.#write.event,
      onDidClose: this.#close.event,
      open: () => this.#write.fire(`\x1b[2m$ ${commandLine}\x1b[0m\r\n${this.output.text.replace(/\r?\n/g, "\r\n")}`),
      close: () => this.kill(),
    };
    this.terminal = vscode.window.createTerminal({ name: `Agent: ${params.command}`, pty, isTransient: true });
    const onData = (data: Buffer): void => {
      const text = data.toString("utf8");
      this.output.append(text);
      this.#write.fire(text.replace(/\r?\n/g, "\r\n"));
    };
    this.#child.stdout?.on("data", onData);
    this.#child.stderr?.on("data", onData);
    this.exited = new Promise((resolve) => {
      this.#child.on("error", (err) => {
        onData(Buffer.from(`${err.message}\n`));
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      this.#child.on("close", (code, signal) => {
        this.exitStatus = { exitCode: code, signal };
        this.#write.fire(`\r\n\x1b[2m[exited: ${signal ?? code}]\x1b[0m\r\n`);
        resolve(this.exitStatus);
      });
    });
  }

  /** Ends the command's process group: SIGTERM, then SIGKILL after a grace period. */
  kill(): void {
    if (this.exitStatus || this.#child.pid === undefined) return;
    const pid = this.#child.pid;
    const signal = (s: NodeJS.Signals): void => {
      try {
        if (process.platform === "win32") this.#child.kill(s);
        else process.kill(-pid, s);
      } catch {
        // Already gone.
      }
    };
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), DEFAULT_TERMINAL_KILL_GRACE_MS);
    void this.exited.then(() => clearTimeout(timer));
  }

  release(): void {
    this.kill();
    this.terminal.dispose();
    this.#write.dispose();
    this.#close.dispose();
  }
}

export class TerminalHost implements vscode.Disposable {
  readonly #terminals = new Map<string, HostTerminal>();

  #get(params: TerminalOutputRequest): HostTerminal {
    const t = typeof params?.terminalId === "string" ? this.#terminals.get(params.terminalId) : undefined;
    if (!t || t.sessionId !== params.sessionId) {
      throw new ResponseError(ErrorCode.ResourceNotFound, `unknown terminal ${String(params?.terminalId)}`);
    }
    return t;
  }

  async create(params: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    if (typeof params?.command !== "string" || params.command.length === 0) {
      throw new ResponseError(ErrorCode.InvalidParams, "command must be a non-empty string");
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!params.cwd && !folder) throw new ResponseError(ErrorCode.InvalidParams, "no workspace folder is open");
    const cwd = await workspacePath(params.cwd ?? folder!.uri.fsPath, "existing", "cwd");
    if (!(await stat(cwd)).isDirectory()) throw new ResponseError(ErrorCode.InvalidParams, `cwd ${String(params.cwd)} is not a folder`);
    const open = [...this.#terminals.values()].filter((t) => t.sessionId === params.sessionId).length;
    if (open >= DEFAULT_MAX_TERMINALS_PER_SESSION) {
      throw new ResponseError(ErrorCode.InvalidParams, `a session may have at most ${DEFAULT_MAX_TERMINALS_PER_SESSION} terminals`);
    }
    const terminal = new HostTerminal(params, cwd);
    this.#terminals.set(terminal.id, terminal);
    return { terminalId: terminal.id };
  }

  output(params: TerminalOutputRequest): TerminalOutputResponse {
    const t = this.#get(params);
    return { output: t.output.text, truncated: t.output.truncated, exitStatus: t.exitStatus ?? null };
  }

  async waitForExit(params: TerminalOutputRequest): Promise<TerminalExitStatus> {
    const status = await this.#get(params).exited;
    return { exitCode: status.exitCode ?? null, signal: status.signal ?? null };
  }

  kill(params: TerminalOutputRequest): Record<string, never> {
    this.#get(params).kill();
    return {};
  }

  release(params: TerminalOutputRequest): Record<string, never> {
    const t = this.#get(params);
    this.#terminals.delete(t.id);
    t.release();
    return {};
  }

  dispose(): void {
    for (const t of this.#terminals.values()) t.release();
    this.#terminals.clear();
  }
}
