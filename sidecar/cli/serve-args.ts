// The flags of `acp-remote serve`, turned into ServeOptions, and their usage text.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { describeArgumentError } from "../../common/argument-errors.ts";
import { parseAgentFlag } from "../bridge/command-line.ts";
import { DEFAULT_HOST, DEFAULT_PORT, defaultDataDir, type ServeOptions } from "../server/options.ts";
import { NOTIFY_ENV, NTFY_TOKEN_ENV, PUBLIC_URL_ENV, publicUrlsFromEnv, TOKEN_ENV, upstreamKeyFromEnv } from "../server/environment.ts";
import { parseNtfyTarget } from "../notify/ntfy-sender.ts";
import { parsePublicUrl } from "../http/public-url.ts";
import type { NamedToken } from "../http/auth.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { loadSidecarRegistryOffline, resolveRegistryAgent, type LoadedAgentRegistry, type RegistryAgentRef } from "../agents/registry.ts";

/** `--root NAME=DIR`: a folder person NAME's sessions may use; a relative DIR is taken from the working directory. */
function parseRootFlag(value: string): { person: string; dir: string } {
  const match = /^([A-Za-z0-9._-]+)=(.+)$/.exec(value);
  if (!match) throw new Error(`--root: "${value}" is not NAME=DIR (NAME as in --token NAME:TOKEN)`);
  return { person: match[1] as string, dir: resolve(match[2] as string) };
}

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
  --root NAME=DIR          a folder person NAME's sessions may work in (cwd, additionalDirectories,
                           file reads and writes, terminals); repeatable; NAME granted none works in
                           DATA-DIR/people/NAME; your own sessions may use any folder
  --no-auth                accept requests without a token (loopback hosts only)
  --tls                    serve HTTPS with a self-signed certificate kept in the data folder
  --cert FILE --key FILE   serve HTTPS with this certificate and key
  --allow-origin ORIGIN    a browser origin allowed to call the server; repeatable
  --public-url URL         the address people use when a proxy or tunnel with TLS stands in
                           front, e.g. https://box.example/acp-remote; repeatable (env
                           ACP_REMOTE_PUBLIC_URL, several separated by spaces): the pairing link
                           names the first, the Host and Origin checks accept each, the web
                           client and /acp work under its path (docs/remote-access.md)
  --upstream-url URL       an OpenAI-compatible provider whose models /v1 passes through
                           (key from env ACP_REMOTE_UPSTREAM_KEY)
  --no-web                 do not serve the web client at /
  --notify ntfy:URL/TOPIC  also send notifications (a permission request waiting, with Allow
                           and Reject; a turn that ended; an agent that failed) to this ntfy
                           topic (env ACP_REMOTE_NOTIFY; its server's token from env
                           ACP_REMOTE_NTFY_TOKEN); paired devices get them by Web Push once
                           they turn them on (docs/web-client.md)
  --data-dir DIR           sessions, journals, deferred results, certificate
                           (default ${defaultDataDir()})
  --store URL              where sessions, journals, deferred jobs and devices live
                           (env ACP_REMOTE_STORE): rediss://:PASSWORD@HOST:PORT/DB shares them
                           between several sidecars behind one address (docs/deployment.md);
                           default: the embedded SQLite file in the data folder
  --store-ca FILE          CA certificates the store's TLS certificate must chain to
                           (env ACP_REMOTE_STORE_CA; default: the system's)
  --node-secret-file FILE  the secret the sidecars on one store share, the same on each (env
                           ACP_REMOTE_NODE_SECRET_FILE, or the secret itself in
                           ACP_REMOTE_NODE_SECRET); required with --store redis…
  --node-id NAME           this sidecar's name among several on one store (env
                           ACP_REMOTE_NODE_ID; default HOSTNAME-PORT)
  --advertise-url URL      where the other sidecars reach this one (default: its own URL)
  --node-ca FILE           CA certificates the other sidecars' TLS certificates must chain to
                           (env ACP_REMOTE_NODE_CA; default: the system's)
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

/** The node secret itself, and a file holding it (children never see either: common/child-environment.ts). */
const NODE_SECRET_ENV = "ACP_REMOTE_NODE_SECRET";
const NODE_SECRET_FILE_ENV = "ACP_REMOTE_NODE_SECRET_FILE";

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** The text of a file a flag names; a file that cannot be read stops the start, naming the flag. */
function readFlagFile(flag: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`${flag}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The flags of `serve`, for parseArgs. */
const SERVE_OPTIONS = {
  host: { type: "string", default: DEFAULT_HOST },
  port: { type: "string", default: String(DEFAULT_PORT) },
  agent: { type: "string", multiple: true, default: [] },
  token: { type: "string", multiple: true, default: [] },
  root: { type: "string", multiple: true, default: [] },
  "no-auth": { type: "boolean", default: false },
  tls: { type: "boolean", default: false },
  cert: { type: "string" },
  key: { type: "string" },
  "allow-origin": { type: "string", multiple: true, default: [] },
  "public-url": { type: "string", multiple: true, default: [] },
  "upstream-url": { type: "string" },
  "no-web": { type: "boolean", default: false },
  notify: { type: "string" },
  "data-dir": { type: "string" },
  store: { type: "string" },
  "store-ca": { type: "string" },
  "node-secret-file": { type: "string" },
  "node-id": { type: "string" },
  "advertise-url": { type: "string" },
  "node-ca": { type: "string" },
  control: { type: "string" },
  // vscode-languageclient appends these to a server's arguments; with
  // --control stdio they say nothing new, so they are accepted and ignored.
  stdio: { type: "boolean", default: false },
  clientProcessId: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} satisfies ParseArgsOptionsConfig;

/**
 * Parses `serve`'s flags; throws with a message naming the bad flag. "help" when --help (-h) is given.
 * `registry` resolves registry agents; without it the data folder's cache (else the shipped snapshot) does.
 */
export function parseServeArgs(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  registry?: LoadedAgentRegistry,
): (ServeOptions & { control?: "stdio"; registryAgents?: RegistryAgentsUsed }) | "help" {
  let parsed;
  try {
    parsed = parseArgs({ args, strict: true, allowPositionals: false, options: SERVE_OPTIONS });
  } catch (error) {
    throw new Error(describeArgumentError(error, SERVE_OPTIONS));
  }
  const { values } = parsed;
  if (values.help) return "help";
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: "${values.port}" is not a port number (0-65535)`);
  if ((values.cert === undefined) !== (values.key === undefined)) throw new Error("--cert and --key go together");
  if (values.control !== undefined && values.control !== "stdio") throw new Error(`--control: only "stdio" is supported`);
  const dataDir = values["data-dir"] ?? defaultDataDir();
  let used: RegistryAgentsUsed | undefined;
  const agentOf = (flag: string): AgentSpec => {
    const ref = registryAgentRef(flag);
    // parseAgentFlag's messages name the flag and its value themselves.
    if (ref === undefined) return parseAgentFlag(flag);
    try {
      used ??= { loaded: registry ?? loadSidecarRegistryOffline(dataDir), agents: [] };
      const { spec, id, version } = resolveRegistryAgent(used.loaded, ref);
      used.agents.push({ name: ref.name, id, version });
      return spec;
    } catch (error) {
      throw new Error(`--agent ${flag}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const tokens: Array<string | NamedToken> = values.token.map(parseTokenFlag);
  if (tokens.length === 0 && env[TOKEN_ENV]) tokens.push(env[TOKEN_ENV]);
  if (values["no-auth"] && tokens.length > 0) throw new Error("--no-auth and a token exclude each other");
  const options: ServeOptions & { control?: "stdio"; registryAgents?: RegistryAgentsUsed } = {
    host: values.host,
    port,
    agents: values.agent.map(agentOf),
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
  const secretFile = values["node-secret-file"] ?? nonEmpty(env[NODE_SECRET_FILE_ENV]);
  const nodeSecret = secretFile === undefined ? nonEmpty(env[NODE_SECRET_ENV]) : readFlagFile("--node-secret-file", secretFile).trim();
  if (nodeSecret !== undefined) options.nodeSecret = nodeSecret;
  const nodeCa = values["node-ca"] ?? nonEmpty(env["ACP_REMOTE_NODE_CA"]);
  if (nodeCa !== undefined) options.nodeCa = readFlagFile("--node-ca", nodeCa);
  const storeCa = values["store-ca"] ?? nonEmpty(env["ACP_REMOTE_STORE_CA"]);
  if (storeCa !== undefined) options.storeCa = readFlagFile("--store-ca", storeCa);
  const publicUrls = values["public-url"].length > 0 ? values["public-url"] : publicUrlsFromEnv(env);
  for (const url of publicUrls) {
    try {
      parsePublicUrl(url);
    } catch (error) {
      throw new Error(`--public-url: ${error instanceof Error ? error.message : String(error)}${values["public-url"].length > 0 ? "" : ` (from ${PUBLIC_URL_ENV})`}`);
    }
  }
  if (publicUrls.length > 0) options.publicUrls = publicUrls;
  const notify = values.notify ?? nonEmpty(env[NOTIFY_ENV]);
  if (notify !== undefined) {
    try {
      parseNtfyTarget(notify);
    } catch (error) {
      throw new Error(`--notify: ${error instanceof Error ? error.message : String(error)}${values.notify === undefined ? ` (from ${NOTIFY_ENV})` : ""}`);
    }
    const ntfyToken = nonEmpty(env[NTFY_TOKEN_ENV]);
    options.notify = { ntfy: notify, ...(ntfyToken === undefined ? {} : { ntfyToken }) };
  }
  if (values.root.length > 0) options.roots = values.root.map(parseRootFlag);
  if (values.control === "stdio") options.control = "stdio";
  if (used !== undefined) options.registryAgents = used;
  return options;
}

