// `acp-remote agents`: the agents of the ACP Registry that `serve --agent ID`
// can run, with where the list comes from and how old it is.
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { describeArgumentError } from "../../common/argument-errors.ts";
import { defaultDataDir } from "../server/options.ts";
import { formatAgentList, loadSidecarRegistry, loadSidecarRegistryOffline, REGISTRY_URL_ENV } from "../agents/registry.ts";
import { registryAgentSpec } from "../../common/agent-registry.ts";

const AGENTS_USAGE = `Usage: acp-remote agents [--json] [--offline] [--refresh] [--data-dir DIR]

Lists the agents of the ACP Registry that \`acp-remote serve --agent ID\` runs, with
the version each is pinned to. The list is refreshed from the registry when the
network allows (at most hourly; env ${REGISTRY_URL_ENV} moves it, empty turns it off)
and cached in the data folder; otherwise the cache, then the snapshot shipped with
acp-remote, is used, and its age shown.

Options:
  --json            the list as JSON: source, fetchedAt, and each agent with its command
  --offline         do not ask the registry: the cache, else the shipped snapshot
  --refresh         ask the registry even when the cache is fresh
  --data-dir DIR    where the cache is kept (default ${defaultDataDir()})
  --help            this text
`;

const AGENTS_OPTIONS = {
  json: { type: "boolean", default: false },
  offline: { type: "boolean", default: false },
  refresh: { type: "boolean", default: false },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} satisfies ParseArgsOptionsConfig;

export async function runAgentsCommand(args: string[], out: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, strict: true, allowPositionals: false, options: AGENTS_OPTIONS }));
  } catch (error) {
    process.stderr.write(`acp-remote agents: ${describeArgumentError(error, AGENTS_OPTIONS)} (see acp-remote agents --help)\n`);
    return 2;
  }
  if (values.help) {
    out(AGENTS_USAGE);
    return 0;
  }
  const dataDir = values["data-dir"] ?? defaultDataDir();
  const loaded = values.offline ? loadSidecarRegistryOffline(dataDir) : await loadSidecarRegistry({ dataDir, force: values.refresh });
  if (!values.json) {
    out(formatAgentList(loaded));
    return 0;
  }
  const agents = loaded.registry.agents.map((agent) => {
    let command: string[] | undefined;
    let unavailable: string | undefined;
    try {
      const spec = registryAgentSpec(agent);
      command = [spec.command, ...spec.args];
    } catch (error) {
      unavailable = (error as Error).message;
    }
    return { ...agent, ...(command ? { command } : {}), ...(unavailable ? { unavailable } : {}) };
  });
  const { registry: _registry, ...source } = loaded;
  out(JSON.stringify({ ...source, agents }, null, 2) + "\n");
  return 0;
}
