// The environment of a process we start for someone else: an agent, a command
// an agent runs in a terminal. It is ours without acp-remote's own variables:
// every ACP_REMOTE_* variable configures the server, and several hold its
// secrets (the access token, the upstream provider's key, the store's address
// with its password, the secret the nodes share). An agent that a prompt led
// astray, or another person's terminal, must not read them and act as the
// server's person. A setting meant for the child is given to it by name (an
// agent's `env`, a terminal's `env`), which is applied after.

/** What every variable that configures acp-remote starts with. */
const SERVER_ENV_PREFIX = "ACP_REMOTE_";

/**
 * The secrets among them, named so that the docs and tests can point at them;
 * children see none of them, nor any other variable with the prefix.
 */
export const SERVER_SECRET_ENV = [
  "ACP_REMOTE_TOKEN",
  "ACP_REMOTE_UPSTREAM_KEY",
  "ACP_REMOTE_STORE",
  "ACP_REMOTE_NODE_SECRET",
  "ACP_REMOTE_NODE_SECRET_FILE",
  "ACP_REMOTE_NTFY_TOKEN",
] as const;

/** Is `name` one of acp-remote's own variables? (Windows spells names in any case.) */
function isServerVariable(name: string): boolean {
  return name.toUpperCase().startsWith(SERVER_ENV_PREFIX);
}

/** `env` (our own by default) without acp-remote's variables, then `extra` on top. */
export function childEnvironment(extra: Readonly<Record<string, string>> = {}, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (!isServerVariable(name)) result[name] = value;
  }
  return Object.assign(result, extra);
}
