// ACP terminals run by the sidecar itself: `terminal/create`, `output`,
// `wait_for_exit`, `kill` and `release`. Each command runs in its own process
// group so that kill and release end what it started too.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { childEnvironment } from "../../common/child-environment.ts";
import { DEFAULT_MAX_TERMINALS_PER_SESSION, DEFAULT_TERMINAL_KILL_GRACE_MS, DEFAULT_TERMINAL_OUTPUT_BYTES } from "../../protocol/host-limits.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";

export interface TerminalExitStatus {
  exitCode: number | null;
  signal: string | null;
}

export interface TerminalOutput {
  output: string;
  truncated: boolean;
  exitStatus?: TerminalExitStatus;
}

export interface TerminalLimits {
  /** Output kept when the agent sets no `outputByteLimit`, in bytes. */
  outputBytes?: number;
  /** Terminals open at once per session. */
  maxPerSession?: number;
  /** Time between SIGTERM and SIGKILL of a command's group, in milliseconds. */
  killGraceMs?: number;
}

export interface CreateTerminal {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Already confined to the session's folders. */
  cwd: string;
  outputByteLimit?: number;
}

/**
 * The last `limit` bytes of a stream. When older bytes are dropped the kept
 * output is marked truncated and starts at a character boundary (ACP:
 * "truncate from the beginning ... at a character boundary").
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  push(chunk: Buffer): void {
    if (this.limit <= 0) {
      this.dropped ||= chunk.length > 0;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.limit) {
      const first = this.chunks[0]!;
      const excess = this.bytes - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
      this.dropped = true;
    }
  }

  get truncated(): boolean {
    return this.dropped;
  }

  /** The kept bytes as text; an incomplete character at either end is left out. */
  text(): string {
    let data = Buffer.concat(this.chunks, this.bytes);
    // Continuation bytes (10xxxxxx) at the start belong to a character whose
    // first bytes were dropped.
    let start = 0;
    while (start < data.length && start < 3 && (data[start]! & 0xc0) === 0x80) start++;
    data = data.subarray(start);
    return data.subarray(0, completeLength(data)).toString("utf8");
  }
}

/** Length of `data` without a trailing character that is not complete yet. */
function completeLength(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? data.length - back : data.length;
  }
  return data.length;
}

class Terminal {
  readonly id: string;
  readonly sessionId: string;
  readonly child: ChildProcess;
  readonly output: OutputTail;
  readonly exited: Promise<TerminalExitStatus>;
  status: TerminalExitStatus | undefined;

  constructor(id: string, sessionId: string, child: ChildProcess, outputLimit: number) {
    this.id = id;
    this.sessionId = sessionId;
    this.child = child;
    this.output = new OutputTail(outputLimit);
    child.stdout?.on("data", (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.output.push(chunk));
    this.exited = new Promise((resolve) => {
      // `close` comes once the output pipes are drained too; a background
      // child that keeps them open must not hold the exit status back, so
      // `exit` settles it when the pipes stay open.
      let settled = false;
      const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (settled) return;
        settled = true;
        this.status = { exitCode: code, signal };
        resolve(this.status);
      };
      child.once("close", settle);
      child.once("exit", (code, signal) => {
        setTimeout(() => settle(code, signal), 50);
      });
    });
  }

  get running(): boolean {
    return this.status === undefined;
  }

  snapshot(): TerminalOutput {
    const result: TerminalOutput = { output: this.output.text(), truncated: this.output.truncated };
    if (this.status) result.exitStatus = this.status;
    return result;
  }

  /** SIGTERM to the group, SIGKILL when it is still there after the grace period. */
  kill(graceMs: number): Promise<TerminalExitStatus> {
    if (this.running) {
      signalGroup(this.child, "SIGTERM");
      const timer = setTimeout(() => signalGroup(this.child, "SIGKILL"), graceMs);
      timer.unref();
      void this.exited.then(() => clearTimeout(timer));
    }
    return this.exited;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

export class LocalTerminals {
  private readonly terminals = new Map<string, Terminal>();
  private readonly outputBytes: number;
  private readonly maxPerSession: number;
  private readonly killGraceMs: number;

  constructor(limits: TerminalLimits = {}) {
    this.outputBytes = limits.outputBytes ?? DEFAULT_TERMINAL_OUTPUT_BYTES;
    this.maxPerSession = limits.maxPerSession ?? DEFAULT_MAX_TERMINALS_PER_SESSION;
    this.killGraceMs = limits.killGraceMs ?? DEFAULT_TERMINAL_KILL_GRACE_MS;
  }

  /** Starts the command; answers once it runs, or fails when it cannot be started. */
  async create(sessionId: string, request: CreateTerminal): Promise<{ terminalId: string }> {
    const open = [...this.terminals.values()].filter((t) => t.sessionId === sessionId).length;
    if (open >= this.maxPerSession) {
      throw RpcFailure.invalidParams(`session ${sessionId} has ${open} terminals open, the most allowed; release one first`);
    }
    const child = spawn(request.command, request.args, {
      cwd: request.cwd,
      // The server's own variables (its token, keys, store address) are not the command's to read.
      env: childEnvironment(request.env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error: NodeJS.ErrnoException) => {
        reject(
          error.code === "ENOENT"
            ? RpcFailure.invalidParams(`cannot run ${JSON.stringify(request.command)}: command not found`)
            : RpcFailure.internal(`cannot run ${JSON.stringify(request.command)}: ${error.message}`),
        );
      });
    });
    const id = `term-${randomUUID()}`;
    const limit = request.outputByteLimit ?? this.outputBytes;
    this.terminals.set(id, new Terminal(id, sessionId, child, limit));
    return { terminalId: id };
  }

  output(sessionId: string, terminalId: string): TerminalOutput {
    return this.find(sessionId, terminalId).snapshot();
  }

  async waitForExit(sessionId: string, terminalId: string, signal: AbortSignal): Promise<TerminalExitStatus> {
    const terminal = this.find(sessionId, terminalId);
    if (signal.aborted) throw new RpcFailure(ErrorCode.RequestCancelled, "wait_for_exit was cancelled");
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new RpcFailure(ErrorCode.RequestCancelled, "wait_for_exit was cancelled"));
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([terminal.exited, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }

  /** Ends the command; the terminal stays, with its output and exit status. */
  async kill(sessionId: string, terminalId: string): Promise<void> {
    await this.find(sessionId, terminalId).kill(this.killGraceMs);
  }

  /** Ends the command if it still runs and forgets the terminal. */
  async release(sessionId: string, terminalId: string): Promise<void> {
    const terminal = this.find(sessionId, terminalId);
    this.terminals.delete(terminalId);
    await terminal.kill(this.killGraceMs);
  }

  /** Every terminal of the session, killed and forgotten. */
  releaseSession(sessionId: string): Promise<void> {
    const ending: Promise<unknown>[] = [];
    for (const terminal of [...this.terminals.values()]) {
      if (terminal.sessionId !== sessionId) continue;
      this.terminals.delete(terminal.id);
      ending.push(terminal.kill(this.killGraceMs));
    }
    return Promise.all(ending).then(() => undefined);
  }

  async dispose(): Promise<void> {
    const all = [...this.terminals.values()];
    this.terminals.clear();
    await Promise.all(all.map((terminal) => terminal.kill(this.killGraceMs)));
  }

  private find(sessionId: string, terminalId: unknown): Terminal {
    const terminal = typeof terminalId === "string" ? this.terminals.get(terminalId) : undefined;
    // Another session's terminal is answered as unknown, like one that never was.
    if (!terminal || terminal.sessionId !== sessionId) {
      throw new RpcFailure(ErrorCode.ResourceNotFound, `unknown terminal ${JSON.stringify(terminalId)} in session ${sessionId}`);
    }
    return terminal;
  }
}
