// The host services the sidecar serves itself when no editor serves them:
// ACP `fs/*` and `terminal/*` requests of an agent, confined to the session's
// folders (its cwd and additionalDirectories). Params and results are ACP's.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { HostMethod } from "../../protocol/control.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import { DEFAULT_MAX_READ_FILE_BYTES } from "../../protocol/host-limits.ts";
import { ConfinementError, confineExisting, confineNew, requireAbsolute, type Folders } from "../../common/confine.ts";
import { LocalTerminals, type TerminalLimits } from "./local-terminals.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";

export interface LocalHostOptions extends TerminalLimits {
  /** Largest file `fs/read_text_file` serves, in bytes. */
  maxReadFileBytes?: number;
}

/** The session a host request belongs to, and the folders it may touch. */
export interface HostScope {
  sessionId: string;
  /** The session's cwd first, then its additionalDirectories; absolute paths. */
  roots: string[];
}

export class LocalHost {
  private readonly maxReadFileBytes: number;
  private readonly terminals: LocalTerminals;

  constructor(options: LocalHostOptions = {}) {
    this.maxReadFileBytes = options.maxReadFileBytes ?? DEFAULT_MAX_READ_FILE_BYTES;
    this.terminals = new LocalTerminals(options);
  }

  /** Serves one host request. Throws RpcFailure; -32601 for a method it does not serve. */
  async handle(method: string, params: unknown, scope: HostScope, signal: AbortSignal): Promise<unknown> {
    try {
      return await this.serve(method, params, scope, signal);
    } catch (error) {
      // The shared confinement rule fails with its own error type; agents get it as JSON-RPC.
      if (error instanceof ConfinementError) throw new RpcFailure(error.code, error.message);
      throw error;
    }
  }

  private async serve(method: string, params: unknown, scope: HostScope, signal: AbortSignal): Promise<unknown> {
    if (!isRecord(params)) throw RpcFailure.invalidParams(`${method}: params must be an object`);
    switch (method) {
      case HostMethod.readTextFile:
        return this.readTextFile(params, scope);
      case HostMethod.writeTextFile:
        return this.writeTextFile(params, scope);
      case HostMethod.terminalCreate:
        return this.createTerminal(params, scope);
      case HostMethod.terminalOutput:
        return this.terminals.output(scope.sessionId, params["terminalId"] as string);
      case HostMethod.terminalWaitForExit:
        return this.terminals.waitForExit(scope.sessionId, params["terminalId"] as string, signal);
      case HostMethod.terminalKill:
        await this.terminals.kill(scope.sessionId, params["terminalId"] as string);
        return {};
      case HostMethod.terminalRelease:
        await this.terminals.release(scope.sessionId, params["terminalId"] as string);
        return {};
      default:
        throw RpcFailure.methodNotFound(method);
    }
  }

  /** The session ended: its terminals are killed. */
  releaseSession(sessionId: string): void {
    void this.terminals.releaseSession(sessionId);
  }

  async dispose(): Promise<void> {
    await this.terminals.dispose();
  }

  private async readTextFile(params: Record<string, unknown>, scope: HostScope): Promise<{ content: string }> {
    const path = requireAbsolute(params["path"]);
    const line = optionalPositiveInteger(params["line"], "line");
    const limit = optionalPositiveInteger(params["limit"], "limit", true);
    const real = await confineExisting(path, sessionFolders(scope));
    const info = await stat(real);
    if (!info.isFile()) throw RpcFailure.invalidParams(`${path} is not a file`);
    if (info.size > this.maxReadFileBytes) {
      throw RpcFailure.invalidParams(`${path} is ${info.size} bytes, larger than the ${this.maxReadFileBytes} bytes fs/read_text_file serves`);
    }
    const content = await readFile(real, "utf8");
    if (line === undefined && limit === undefined) return { content };
    // ACP: `line` is 1-based; `limit` is the number of lines from there.
    const lines = content.split("\n");
    const start = (line ?? 1) - 1;
    return { content: lines.slice(start, limit === undefined ? undefined : start + limit).join("\n") };
  }

  private async writeTextFile(params: Record<string, unknown>, scope: HostScope): Promise<Record<string, never>> {
    const path = requireAbsolute(params["path"]);
    const content = params["content"];
    if (typeof content !== "string") throw RpcFailure.invalidParams("content must be a string");
    const target = await confineNew(path, sessionFolders(scope));
    await mkdir(dirname(target), { recursive: true });
    try {
      await writeFile(target, content, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EISDIR") throw RpcFailure.invalidParams(`${path} is a folder`);
      throw RpcFailure.internal(`cannot write ${path}: ${(error as Error).message}`);
    }
    return {};
  }

  private async createTerminal(params: Record<string, unknown>, scope: HostScope): Promise<{ terminalId: string }> {
    const command = params["command"];
    if (typeof command !== "string" || command.length === 0) throw RpcFailure.invalidParams("command must be a non-empty string");
    const args = params["args"] ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) throw RpcFailure.invalidParams("args must be an array of strings");
    const env: Record<string, string> = {};
    const envList = params["env"] ?? [];
    if (!Array.isArray(envList)) throw RpcFailure.invalidParams("env must be an array of { name, value }");
    for (const entry of envList) {
      if (!isRecord(entry) || typeof entry["name"] !== "string" || typeof entry["value"] !== "string") {
        throw RpcFailure.invalidParams("env must be an array of { name, value }");
      }
      env[entry["name"]] = entry["value"];
    }
    const requestedCwd = params["cwd"] ?? scope.roots[0];
    const cwd = await confineExisting(requireAbsolute(requestedCwd, "cwd"), sessionFolders(scope));
    if (!(await stat(cwd)).isDirectory()) throw RpcFailure.invalidParams(`cwd ${String(requestedCwd)} is not a folder`);
    const outputByteLimit = optionalPositiveInteger(params["outputByteLimit"], "outputByteLimit", true);
    return this.terminals.create(scope.sessionId, {
      command,
      args: args as string[],
      env,
      cwd,
      ...(outputByteLimit === undefined ? {} : { outputByteLimit }),
    });
  }
}

function sessionFolders(scope: HostScope): Folders {
  return { roots: scope.roots, name: "the session's folders (its cwd and additionalDirectories)" };
}

function optionalPositiveInteger(value: unknown, field: string, zeroAllowed = false): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < (zeroAllowed ? 0 : 1)) {
    throw RpcFailure.invalidParams(`${field} must be an integer of at least ${zeroAllowed ? 0 : 1}`);
  }
  return value;
}
