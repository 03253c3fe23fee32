// The published agents these tests run for real turns behind `acp-remote
// serve`, each pointed at the scripted model endpoint (test/helpers/
// scripted-model) on loopback: which of its APIs the agent speaks, the
// environment and files that point it there, and its own file-writing tool.
// Claude Agent is the project's devDependency; the others come from the
// interop test cache (test/interop/published-agents.ts pins their versions).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelApiKind, ScriptedToolCall } from "../helpers/scripted-model/server.ts";
import { PUBLISHED_AGENTS, type PublishedAgent } from "../interop/published-agents.ts";

export const DUMMY_KEY = "sk-scripted-dummy-key";
/** The model the agents are told to use; the scripted endpoint answers for any. */
export const SCRIPTED_MODEL = "scripted-model";

export interface RealAgent {
  /** The name it is served under. */
  name: string;
  /** `agentInfo.name` in its answer to `initialize`. */
  agentName: string;
  /** The npm package, for skip messages and the docs. */
  pkg: string;
  /** The API of the scripted endpoint it calls. */
  api: ModelApiKind;
  /** Where it comes from: a devDependency (its package and bin), or the interop cache. */
  source: { devDependency: { pkg: string; bin: string } } | { published: PublishedAgent };
  /** Its command line for ACP on stdio, from the folder its package's bins are in. */
  command(bin: string): { command: string; args: string[] };
  /** Its environment (HOME is `home`), pointing it at the endpoint `api`. */
  env(api: string, home: string): Record<string, string>;
  /** The session mode in which it asks before each edit, when its sessions start in another. */
  approvalMode?: string;
  /** The session mode its shell tool runs in here, when its sessions start in another. */
  shellMode?: string;
  /** The `authenticate` method it needs before `session/new`, if any. */
  authMethod?: string;
  /** Its own tool that writes `content` to the absolute `path`. */
  writeTool(path: string, content: string): ScriptedToolCall;
  /** Its own tool that runs a shell command in the session's folder. */
  shellTool(command: string): ScriptedToolCall;
}

/**
 * What the interop cache already pins of a published agent: its package, the
 * name it answers `initialize` with, its command line for ACP on stdio (with
 * `moreArgs` after its own) and its `authenticate` method.
 */
function published(registryId: string, moreArgs: string[] = []): Pick<RealAgent, "agentName" | "pkg" | "source" | "command" | "authMethod"> {
  const agent = PUBLISHED_AGENTS.find((a) => a.registryId === registryId)!;
  return {
    agentName: agent.agentName,
    pkg: agent.pkg,
    source: { published: agent },
    command: (bin) => ({ command: join(bin, agent.bin), args: [...agent.args, ...moreArgs] }),
    authMethod: agent.authMethod,
  };
}

/** The bin of a devDependency, run with this Node (its shebang would pick whatever `node` is on PATH). */
export function devDependencyEntry(pkg: string, bin: string): string | undefined {
  const packageJson = fileURLToPath(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url));
  if (!existsSync(packageJson)) return undefined;
  const entry = (JSON.parse(readFileSync(packageJson, "utf8")) as { bin: Record<string, string> }).bin[bin];
  return entry === undefined ? undefined : join(dirname(packageJson), entry);
}

export const CLAUDE_AGENT: RealAgent = {
  name: "claude",
  agentName: "@agentclientprotocol/claude-agent-acp",
  pkg: "@agentclientprotocol/claude-agent-acp",
  api: "anthropic-messages",
  source: { devDependency: { pkg: "@agentclientprotocol/claude-agent-acp", bin: "claude-agent-acp" } },
  command: () => ({ command: process.execPath, args: [devDependencyEntry("@agentclientprotocol/claude-agent-acp", "claude-agent-acp")!] }),
  env: (api) => ({
    ANTHROPIC_BASE_URL: api,
    ANTHROPIC_API_KEY: DUMMY_KEY,
    ANTHROPIC_MODEL: SCRIPTED_MODEL,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  }),
  writeTool: (path, content) => ({ name: "Write", arguments: { file_path: path, content } }),
  shellTool: (command) => ({ name: "Bash", arguments: { command, description: "Run the command" } }),
};

export const QWEN_CODE: RealAgent = {
  name: "qwen",
  ...published("qwen-code"),
  api: "openai-chat",
  // Its sessions start in "auto", which edits without asking.
  approvalMode: "default",
  env: (api) => ({ OPENAI_API_KEY: DUMMY_KEY, OPENAI_BASE_URL: `${api}/v1`, OPENAI_MODEL: SCRIPTED_MODEL }),
  writeTool: (path, content) => ({ name: "write_file", arguments: { file_path: path, content } }),
  shellTool: (command) => ({ name: "run_shell_command", arguments: { command, description: "Run the command", is_background: false } }),
};

export const CODEX: RealAgent = {
  name: "codex",
  ...published("codex-acp"),
  api: "openai-responses",
  // In its other modes it runs commands in its own sandbox (bubblewrap), which a container may not have.
  shellMode: "full-access",
  env: (api, home) => {
    // Codex reads its model provider from its config file only.
    const codexHome = join(home, ".codex");
    mkdirSync(codexHome, { recursive: true });
    // A provider of its own: the Responses API over HTTP only (the built-in one tries a WebSocket first).
    writeFileSync(
      join(codexHome, "config.toml"),
      [
        `model = "${SCRIPTED_MODEL}"`,
        `model_provider = "scripted"`,
        `[model_providers.scripted]`,
        `name = "Scripted"`,
        `base_url = "${api}/v1"`,
        `env_key = "OPENAI_API_KEY"`,
        `wire_api = "responses"`,
        `supports_websockets = false`,
        ``,
      ].join("\n"),
    );
    return { OPENAI_API_KEY: DUMMY_KEY, CODEX_HOME: codexHome };
  },
  // Codex edits with apply_patch, which it runs from its shell tool (the model it knows no metadata of is offered no apply_patch tool).
  writeTool: (path, content) => ({
    name: "exec_command",
    arguments: { cmd: `apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: ${path}\n${content.replace(/\n$/, "").split("\n").map((l) => `+${l}`).join("\n")}\n*** End Patch\nPATCH\n` },
  }),
  shellTool: (command) => ({ name: "exec_command", arguments: { cmd: command } }),
};

export const OPENCODE: RealAgent = {
  name: "opencode",
  ...published("opencode"),
  api: "openai-chat",
  env: (api) => ({
    OPENCODE_CONFIG_CONTENT: JSON.stringify({
      provider: { scripted: { npm: "@ai-sdk/openai-compatible", name: "Scripted", options: { baseURL: `${api}/v1`, apiKey: DUMMY_KEY }, models: { [SCRIPTED_MODEL]: { name: "Scripted" } } } },
      model: `scripted/${SCRIPTED_MODEL}`,
      // It edits without asking unless told to ask.
      permission: { edit: "ask" },
    }),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
  }),
  writeTool: (path, content) => ({ name: "write", arguments: { filePath: path, content } }),
  shellTool: (command) => ({ name: "bash", arguments: { command, description: "Run the command" } }),
};

export const GEMINI_CLI: RealAgent = {
  name: "gemini",
  ...published("gemini", ["--model", SCRIPTED_MODEL]),
  api: "gemini",
  env: (api) => ({ GEMINI_API_KEY: DUMMY_KEY, GOOGLE_GEMINI_BASE_URL: api }),
  writeTool: (path, content) => ({ name: "write_file", arguments: { file_path: path, content } }),
  shellTool: (command) => ({ name: "run_shell_command", arguments: { command, description: "Run the command" } }),
};
