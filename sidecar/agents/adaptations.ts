// What published agents need of the server that runs them, beyond ACP: each
// need is a named adaptation, applied where the agent is spawned, to the
// agents it names, and to no other. The hub knows none of them. docs/agents.md
// lists them with the agents they apply to.
import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { childEnvironment } from "../../common/child-environment.ts";

export interface AgentAdaptation {
  /** Its name, as docs/agents.md lists it. */
  readonly name: string;
  /** Does it apply to this agent? Told by the agent's command line, before the agent runs. */
  applies(spec: AgentSpec): boolean;
  /** The agent's environment, from the one it would start with. */
  environment?(env: NodeJS.ProcessEnv, spec: AgentSpec): NodeJS.ProcessEnv;
  /** What the server offers the agent in `initialize`, from what it offers every agent. */
  clientCapabilities?(capabilities: ClientCapabilities): ClientCapabilities;
}

/** The words of an agent's command line, for telling which published agent it runs. */
function commandWords(spec: AgentSpec): string[] {
  return [spec.command, ...spec.args];
}

/** Claude Agent (claude-agent-acp, formerly claude-code-acp): by its package or its bin in the command line. */
function isClaudeAgent(spec: AgentSpec): boolean {
  return commandWords(spec).some((word) => /claude-(agent|code)-acp/.test(word));
}

/**
 * Claude Agent reads `IS_SANDBOX` as "the machine is a sandbox": set to any
 * value, it skips every permission request (so no remote client is asked),
 * and the Claude Code process it starts then refuses to run as root unless
 * the value is exactly `1`, so that no session can be created. Containers
 * and sandboxes set it for their own tools; the agent does not inherit it.
 * An `IS_SANDBOX` the agent's own `env` names is kept.
 */
const CLAUDE_SANDBOX_FLAG_NOT_INHERITED: AgentAdaptation = {
  name: "claude-sandbox-flag-not-inherited",
  applies: isClaudeAgent,
  environment: (env, spec) => {
    if (spec.env?.["IS_SANDBOX"] !== undefined) return env;
    const result = { ...env };
    delete result["IS_SANDBOX"];
    return result;
  },
};

/** Gemini CLI: by its package (`@google/gemini-cli`) or its bin, `gemini`, in the command line. */
function isGeminiCli(spec: AgentSpec): boolean {
  return commandWords(spec).some((word) => /@google\/gemini-cli|(^|[/\\])gemini(\.cmd|\.exe)?$/.test(word));
}

/**
 * Gemini CLI reads a file through the client's `fs/read_text_file` before it
 * writes it, and takes an error that says the file does not exist as "a new
 * file". Its ACP library rejects a failed request with the bare error object,
 * which that check never recognises, so every new file fails ("Error checking
 * existing file: … does not exist") whatever the client answers. Offered no
 * `fs/*`, it reads and writes files itself, and creates them.
 */
const GEMINI_FS_NOT_OFFERED: AgentAdaptation = {
  name: "gemini-fs-not-offered",
  applies: isGeminiCli,
  clientCapabilities: (capabilities) => {
    const { fs: _fs, ...rest } = capabilities;
    return rest;
  },
};

const AGENT_ADAPTATIONS: readonly AgentAdaptation[] = [CLAUDE_SANDBOX_FLAG_NOT_INHERITED, GEMINI_FS_NOT_OFFERED];

/** The adaptations that apply to `spec`, in order. */
export function adaptationsFor(spec: AgentSpec): AgentAdaptation[] {
  return AGENT_ADAPTATIONS.filter((a) => a.applies(spec));
}

/** What the server offers an agent in `initialize`: `capabilities`, as its adaptations change them. */
export function agentClientCapabilities(spec: AgentSpec, capabilities: ClientCapabilities): ClientCapabilities {
  let result = capabilities;
  for (const adaptation of adaptationsFor(spec)) result = adaptation.clientCapabilities?.(result) ?? result;
  return result;
}

/** The environment an agent starts with: the server's without its own variables, the spec's `env`, then its adaptations. */
export function agentEnvironment(spec: AgentSpec, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let result = childEnvironment(spec.env, env);
  for (const adaptation of adaptationsFor(spec)) result = adaptation.environment?.(result, spec) ?? result;
  return result;
}
