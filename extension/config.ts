// The extension's settings (package.json `contributes.configuration`), read in
// one place. Config knows which keys need a restart of the sidecar and which
// apply live, and validates what the sidecar would otherwise fail on later
// with a less helpful message (a malformed agent command names its setting).
import * as vscode from "vscode";
import type { PermissionPolicy } from "../protocol/control.ts";
import type { AgentSpec } from "../protocol/agent-spec.ts";
import { isRecord } from "../protocol/jsonrpc.ts";

export const SECTION = "acpRemote";

/** Settings the running sidecar cannot change: a change asks to restart it. */
const RESTART_KEYS = ["server.host", "server.port", "server.tls", "agents", "upstream.url"] as const;
/** Settings that apply to the running sidecar at once. */
const LIVE_KEYS = ["permissions.answeredBy"] as const;

export class ConfigError extends Error {
  override name = "ConfigError";
  /** The full setting id, e.g. `acpRemote.agents[1].command`. */
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`Setting ${setting}: ${message}`);
    this.setting = setting;
  }
}

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const POLICIES: readonly PermissionPolicy[] = ["editor", "client", "both"];

/** Checks `acpRemote.agents` item by item; the first problem is thrown with the item's path. */
function parseAgents(value: unknown): AgentSpec[] {
  const setting = `${SECTION}.agents`;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(setting, "must be an array of { name, command, args, env }");
  const names = new Set<string>();
  return value.map((item: unknown, i): AgentSpec => {
    const at = `${setting}[${i}]`;
    if (!isRecord(item)) throw new ConfigError(at, "must be an object { name, command, args, env }");
    const { name, command, args, env } = item;
    if (typeof name !== "string" || !AGENT_NAME.test(name)) {
      throw new ConfigError(`${at}.name`, "must be a name of letters, digits, '.', '_' or '-' (it is used in URLs)");
    }
    if (names.has(name)) throw new ConfigError(`${at}.name`, `"${name}" is used by an earlier agent`);
    names.add(name);
    if (typeof command !== "string" || command.trim().length === 0) {
      throw new ConfigError(`${at}.command`, "must be a non-empty string: the program to run (its arguments go in args)");
    }
    if (/\s/.test(command.trim()) && !/[\\/]/.test(command)) {
      throw new ConfigError(`${at}.command`, `"${command}" holds spaces: put the program in command and each argument in args`);
    }
    if (args !== undefined && (!Array.isArray(args) || !args.every((a) => typeof a === "string"))) {
      throw new ConfigError(`${at}.args`, "must be an array of strings");
    }
    if (env !== undefined && (!isRecord(env) || !Object.values(env).every((v) => typeof v === "string"))) {
      throw new ConfigError(`${at}.env`, "must be an object whose values are strings");
    }
    const spec: AgentSpec = { name, command: command.trim(), args: (args as string[] | undefined) ?? [] };
    if (env !== undefined) spec.env = env as Record<string, string>;
    return spec;
  });
}

export interface ServerSettings {
  host: string;
  port: number;
  tls: boolean;
  agents: AgentSpec[];
  /** Base URL of an OpenAI-compatible provider whose models /v1 passes through; empty for none. */
  upstreamUrl: string;
}

export class Config implements vscode.Disposable {
  readonly #subscription: vscode.Disposable;
  readonly #onRestartNeeded = new vscode.EventEmitter<string[]>();
  readonly #onLiveChange = new vscode.EventEmitter<string[]>();
  /** Keys whose change needs a restart of the running sidecar. */
  readonly onRestartNeeded = this.#onRestartNeeded.event;
  /** Keys that changed and apply at once. */
  readonly onLiveChange = this.#onLiveChange.event;

  constructor() {
    this.#subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      const restart = RESTART_KEYS.filter((k) => e.affectsConfiguration(`${SECTION}.${k}`)).map((k) => `${SECTION}.${k}`);
      const live = LIVE_KEYS.filter((k) => e.affectsConfiguration(`${SECTION}.${k}`)).map((k) => `${SECTION}.${k}`);
      if (restart.length > 0) this.#onRestartNeeded.fire(restart);
      if (live.length > 0) this.#onLiveChange.fire(live);
    });
  }

  get #cfg(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION);
  }

  get autoStart(): boolean {
    return this.#cfg.get<boolean>("autoStart", false);
  }

  /** Stop Server and Restart Server ask first while remote clients are connected. */
  get confirmStop(): boolean {
    return this.#cfg.get<boolean>("server.confirmStop", true) !== false;
  }

  get permissionPolicy(): PermissionPolicy {
    const value = this.#cfg.get<string>("permissions.answeredBy", "both");
    return POLICIES.includes(value as PermissionPolicy) ? (value as PermissionPolicy) : "both";
  }

  /** The listener settings; throws ConfigError naming the setting that is wrong. */
  server(): ServerSettings {
    const cfg = this.#cfg;
    const host = cfg.get<string>("server.host", "127.0.0.1");
    if (typeof host !== "string" || host.trim() === "") throw new ConfigError(`${SECTION}.server.host`, "must be a host name or address");
    const port = cfg.get<number>("server.port", 8765);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new ConfigError(`${SECTION}.server.port`, "must be an integer from 0 to 65535 (0 picks a free port)");
    }
    const upstreamUrl = (cfg.get<string>("upstream.url", "") ?? "").trim();
    if (upstreamUrl !== "" && !/^https?:\/\/[^\s]+$/.test(upstreamUrl)) {
      throw new ConfigError(`${SECTION}.upstream.url`, "must be an http:// or https:// URL, e.g. https://api.openai.com/v1, or empty");
    }
    return { host: host.trim(), port, tls: cfg.get<boolean>("server.tls", false) === true, agents: parseAgents(cfg.get("agents")), upstreamUrl };
  }

  dispose(): void {
    this.#subscription.dispose();
    this.#onRestartNeeded.dispose();
    this.#onLiveChange.dispose();
  }
}
