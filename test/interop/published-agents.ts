// The published ACP agents the interop suite runs behind `acp-remote serve`:
// exact versions (one npm install into the test cache), how each starts
// without a network, and what it needs (a dummy key, `authenticate`). Each
// gets a HOME, XDG folders and a TMPDIR of its own, so nothing touches the
// real home; its model API is a local endpoint that refuses every call
// (refusing-model-api.ts), so a prompt fails at once, the same way each time.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface PublishedAgent {
  /** Its id in the ACP Registry. */
  registryId: string;
  /** npm package and exact version. */
  pkg: string;
  version: string;
  /** The executable in node_modules/.bin, and its arguments for ACP on stdio. */
  bin: string;
  args: string[];
  /** `agentInfo.name` it answers `initialize` with. */
  agentName: string;
  /** The `authenticate` method it needs before `session/new`, if any. */
  authMethod?: string;
  /** The environment that points it at the refusing model API (`api` is its base URL, `home` its HOME). */
  env(api: string, home: string): Record<string, string>;
}

const DUMMY_KEY = "sk-interop-dummy-key";

export const PUBLISHED_AGENTS: readonly PublishedAgent[] = [
  {
    registryId: "opencode",
    pkg: "opencode-ai",
    version: "1.18.33",
    bin: "opencode",
    args: ["acp"],
    agentName: "OpenCode",
    // Needs no key; its default provider's base URL moved by the inline config.
    env: (api) => ({ OPENCODE_CONFIG_CONTENT: JSON.stringify({ provider: { opencode: { options: { baseURL: api } } } }), OPENCODE_DISABLE_AUTOUPDATE: "1" }),
  },
  {
    registryId: "gemini",
    pkg: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
    args: ["--acp"],
    agentName: "gemini-cli",
    env: (api) => ({ GEMINI_API_KEY: DUMMY_KEY, GOOGLE_GEMINI_BASE_URL: api }),
  },
  {
    registryId: "codex-acp",
    pkg: "@zed-industries/codex-acp",
    version: "0.16.0",
    bin: "codex-acp",
    args: [],
    agentName: "codex-acp",
    authMethod: "openai-api-key",
    env: (api, home) => {
      // Codex reads its base URL from its config file only.
      const codexHome = join(home, ".codex");
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, "config.toml"), `openai_base_url = "${api}/v1"\n`);
      return { OPENAI_API_KEY: DUMMY_KEY, CODEX_HOME: codexHome };
    },
  },
  {
    registryId: "qwen-code",
    pkg: "@qwen-code/qwen-code",
    version: "0.24.4",
    bin: "qwen",
    args: ["--acp", "--auth-type=openai"],
    agentName: "qwen-code",
    env: (api) => ({ OPENAI_API_KEY: DUMMY_KEY, OPENAI_BASE_URL: `${api}/v1`, OPENAI_MODEL: "interop-model" }),
  },
];

/** `name` → exact version, for the one npm install. */
export function pinnedPackages(): Record<string, string> {
  return Object.fromEntries(PUBLISHED_AGENTS.map((a) => [a.pkg, a.version]));
}

/** HOME, the XDG folders and TMPDIR of one agent run, under `root`. */
export function isolatedHome(root: string): { home: string; env: Record<string, string> } {
  const home = join(root, "home");
  const env = {
    HOME: home,
    TMPDIR: join(root, "tmp"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local/state"),
    // No telemetry, update checks or colour codes from any of them.
    CI: "1",
    NO_COLOR: "1",
  };
  for (const dir of [home, env.TMPDIR, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME, env.XDG_CACHE_HOME, env.XDG_STATE_HOME]) mkdirSync(dir, { recursive: true });
  return { home, env };
}
