// The flags of `acp-remote serve`, turned into ServeOptions, and their usage text.
import { parseArgs } from "node:util";
import { parseAgentFlag } from "../bridge/command-line.ts";
import { DEFAULT_HOST, DEFAULT_PORT, defaultDataDir, type ServeOptions } from "../server/options.ts";
import { upstreamKeyFromEnv } from "../server/environment.ts";
import type { NamedToken } from "../server/http/auth.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { loadSidecarRegistryOffline, resolveRegistryAgent, type LoadedAgentRegistry, type RegistryAgentRef } from "../agents/registry.ts";

/** `--token TOKEN` (the server's person) or `--token NAME:TOKEN` (a person of their own, named NAME). */
function parseTokenFlag(value: string): string | NamedToken {
  const match = /^([A-Za-z0-9._-]+):(.+)$/.exec(value);
  return match ? { label: match[1] as string, token: match[2] as string } : value;
}

export const SERVE_OPTIONS_USAGE = `  --host HOST              address to bind (default ${DEFAULT_HOST})
  --port PORT              port (default ${DEFAULT_PORT}; 0 picks a free one)
  --agent NAME=COMMAND     an ACP agent started over stdio; repeatable; the first is the default
                           (default: the embedded demo agent)
  --agent ID               an agent of the ACP Registry by its id or short name (claude, gemini),
  --agent NAME=registry:ID at the version the registry pins; \`acp-remote agents\` lists them
  --token TOKEN            accepted bearer token, for you; repeatable (env ACP_REMOTE_TOKEN); when
                           none is given one is generated and kept in the data folder; on a
                           terminal, a pairing link and its QR code are printed
  --token NAME:TOKEN       a token for another person, NAME, with sessions and jobs of their own
  --no-auth                accept requests without a token (loopback hosts only)
  --tls                    serve HTTPS with a self-signed certificate kept in the data folder
  --cert FILE --key FILE   serve HTTPS with this certificate and key
  --allow-origin ORIGIN    a browser origin allowed to call the server; repeatable
  --upstream-url URL       an OpenAI-compatible provider whose models /v1 passes through
                           (key from env ACP_REMOTE_UPSTREAM_KEY)
  --no-web                 do not serve the web client at /
  --data-dir DIR           sessions, journals, deferred results, certificate
                           (default ${defaultDataDir()})
  --store URL              where sessions, journals, deferred jobs and devices live
                           (env ACP_REMOTE_STORE): redis://HOST:PORT/DB shares them
                           between several sidecars behind one address (docs/deployment.md);
                           default: the embedded SQLite file in the data folder
  --node-id NAME           this sidecar's name among several on one store (env
                           ACP_REMOTE_NODE_ID; default HOSTNAME-PORT)
  --advertise-url URL      where the other sidecars reach this one (default: its own URL)
  --control stdio          be hosted by an editor over the control protocol on stdio
  --help                   this text
`;

export const SERVE_USAGE = `Usage: acp-remote serve [options]

Starts the sidecar: /acp (ACP remote transport) and /v1 on one port. Prints
\`acp-remote listening on <URL>\` on stdout once it listens. SIGTERM drains (no new
connections, /readyz says draining, running turns end first) and stops; SIGINT,
or a second SIGTERM, stops at once.

Options:
${SERVE_OPTIONS_USAGE}
Exit codes: 0 stopped by a signal, 1 could not start, 2 bad arguments.
`;

const REGISTRY_PREFIX = "registry:";

/** `--agent ID` and `--agent NAME=registry:ID` name an agent of the ACP Registry; anything else is NAME=COMMAND. */
export function registryAgentRef(flag: string): RegistryAgentRef | undefined {
  const eq = flag.indexOf("=");
  if (eq === -1) return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(flag.trim()) ? { name: flag.trim(), query: flag.trim() } : undefined;
  const command = flag.slice(eq + 1).trim();
  return command.startsWith(REGISTRY_PREFIX) ? { name: flag.slice(0, eq).trim(), query: command.slice(REGISTRY_PREFIX.length).trim() } : undefined;
}

/**
 * What start-up needs before the flags are parsed for good: whether an agent
 * comes from the registry (then the list is refreshed first) and the data
 * folder (where its cache is). Lenient: parseServeArgs reports bad flags.
 */
export function peekServeArgs(args: string[]): { registryAgents: boolean; dataDir: string } {
  const { values } = parseArgs({ args, strict: false, allowPositionals: true, options: { agent: { type: "string", multiple: true }, "data-dir": { type: "string" } } });
  const agents = (values.agent ?? []).filter((a): a is string => typeof a === "string");
  const dataDir = typeof values["data-dir"] === "string" ? values["data-dir"] : defaultDataDir();
  return { registryAgents: agents.some((a) => registryAgentRef(a) !== undefined), dataDir };
}

/** Agents of the registry that `--agent` named, as served: for the start-up log. */
export interface RegistryAgentsUsed {
  loaded: LoadedAgentRegistry;
  agents: Array<{ name: string; id: string; version: string }>;
}

/**
 * Parses `serve`'s flags; throws with a message naming the bad flag. "help" when --help (-h) is given.
 * `registry` resolves registry agents; without it the data folder's cache (else the shipped snapshot) does.
 */
export function parseServeArgs(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  registry?: LoadedAgentRegistry,
): (ServeOptions & { control?: "stdio"; registryAgents?: RegistryAgentsUsed }) | "help" {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      host: { type: "string", default: DEFAULT_HOST },
      port: { type: "string", default: String(DEFAULT_PORT) },
      agent: { type: "string", multiple: true, default: [] },
      token: { type: "string", multiple: true, default: [] },
      "no-auth": { type: "boolean", default: false },
      tls: { type: "boolean", default: false },
      cert: { type: "string" },
      key: { type: "string" },
      "allow-origin": { type: "string", multiple: true, default: [] },
      "upstream-url": { type: "string" },
      "no-web": { type: "boolean", default: false },
      "data-dir": { type: "string" },
      store: { type: "string" },
      "node-id": { type: "string" },
      "advertise-url": { type: "string" },
      control: { type: "string" },
      // vscode-languageclient appends these to a server's arguments; with
      // --control stdio they say nothing new, so they are accepted and ignored.
      stdio: { type: "boolean", default: false },
      clientProcessId: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: "${values.port}" is not a port number (0-65535)`);
  if ((values.cert === undefined) !== (values.key === undefined)) throw new Error("--cert and --key go together");
  if (values.control !== undefined && values.control !== "stdio") throw new Error(`--control: only "stdio" is supported`);
  const dataDir = values["data-dir"] ?? defaultDataDir();
  let used: RegistryAgentsUsed | undefined;
  const agentOf = (flag: string): AgentSpec => {
    const ref = registryAgentRef(flag);
    if (ref === undefined) return parseAgentFlag(flag);
    used ??= { loaded: registry ?? loadSidecarRegistryOffline(dataDir), agents: [] };
    const { spec, id, version } = resolveRegistryAgent(used.loaded, ref);
    used.agents.push({ name: ref.name, id, version });
    return spec;
  };
  const tokens: Array<string | NamedToken> = values.token.map(parseTokenFlag);
  if (tokens.length === 0 && env["ACP_REMOTE_TOKEN"]) tokens.push(env["ACP_REMOTE_TOKEN"]);
  if (values["no-auth"] && tokens.length > 0) throw new Error("--no-auth and a token exclude each other");
  const options: ServeOptions & { control?: "stdio"; registryAgents?: RegistryAgentsUsed } = {
    host: values.host,
    port,
    agents: values.agent.map((flag) => {
      try {
        return agentOf(flag);
      } catch (error) {
        throw new Error(`--agent ${flag}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
    tokens,
    auth: !values["no-auth"],
    dataDir,
    allowedOrigins: values["allow-origin"],
    web: !values["no-web"],
  };
  if (values.cert !== undefined && values.key !== undefined) options.tls = { cert: values.cert, key: values.key };
  else if (values.tls) options.tls = "self-signed";
  if (values["upstream-url"] !== undefined) {
    const apiKey = upstreamKeyFromEnv(env);
    options.upstream = apiKey === undefined ? { url: values["upstream-url"] } : { url: values["upstream-url"], apiKey };
  }
  const store = values.store ?? env["ACP_REMOTE_STORE"];
  if (store !== undefined && store !== "") {
    if (!/^(rediss?|sqlite):/.test(store)) throw new Error(`--store: "${store}" is neither redis://HOST:PORT/DB nor sqlite:`);
    if (store.startsWith("redis")) options.store = store;
  }
  const nodeId = values["node-id"] ?? env["ACP_REMOTE_NODE_ID"];
  if (nodeId !== undefined && nodeId !== "") {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(nodeId)) throw new Error(`--node-id: "${nodeId}" must be 1-64 letters, digits, ".", "_" or "-"`);
    options.nodeId = nodeId;
  }
  if (values["advertise-url"] !== undefined) {
    if (!/^https?:\/\//.test(values["advertise-url"])) throw new Error(`--advertise-url: "${values["advertise-url"]}" is not an http(s) URL`);
    options.advertiseUrl = values["advertise-url"];
  }
  if (values.control === "stdio") options.control = "stdio";
  if (used !== undefined) options.registryAgents = used;
  return options;
}

