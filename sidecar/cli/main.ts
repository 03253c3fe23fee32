// The `acp-remote` command: `serve` (the sidecar), `connect` (a stdio ACP
// endpoint for editors that talks the remote transport), `demo-agent` (the
// embedded demo agent on stdio, which `serve` spawns when no agent is given),
// `agents` (the agents of the ACP Registry that `serve --agent ID` runs).
import { join } from "node:path";
import type { ServeOptions } from "../server/options.ts";
import type { RunningServer } from "../server/serve.ts";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../http/server-limits.ts";
import { parseServeArgs, peekServeArgs, SERVE_OPTIONS_USAGE, SERVE_USAGE } from "./serve-args.ts";
import { TOKEN_ENV } from "../server/environment.ts";
import { VERSION } from "../../protocol/version.ts";
import { nearestWord } from "../../common/argument-errors.ts";

const USAGE = `acp-remote ${VERSION}

Usage:
  acp-remote serve [options]        start the sidecar: /acp (ACP remote transport) and /v1 on one port
  acp-remote connect <url> [opts]   a stdio ACP agent for editors, relaying to a remote acp-remote server
  acp-remote agents [--json]        the agents of the ACP Registry that \`serve --agent ID\` runs
  acp-remote demo-agent             the embedded demo agent, on stdio
  acp-remote --version | --help

serve options (also \`acp-remote serve --help\`):
${SERVE_OPTIONS_USAGE}
connect options: see \`acp-remote connect --help\`.
`;

const DEMO_AGENT_USAGE = `Usage: acp-remote demo-agent [--editor]

The embedded demo ACP agent, speaking newline-delimited JSON-RPC on stdio;
\`acp-remote serve\` runs it when no --agent is given.

  --editor   the server runs under an editor: the demo's advice on a real
             agent names the editor's setting and command, not \`serve --agent\`
`;

const HELP_FLAGS: ReadonlySet<string> = new Set(["--help", "-h"]);

/** The commands, for the suggestion after a mistyped one. */
const COMMANDS: readonly string[] = ["serve", "connect", "agents", "demo-agent", "--version", "--help"];

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return runServe(rest);
    case "connect": {
      const { runConnect } = await import("../../client/connect.ts");
      return runConnect(rest);
    }
    case "agents": {
      const { runAgentsCommand } = await import("./agents-command.ts");
      return runAgentsCommand(rest);
    }
    case "demo-agent": {
      if (rest.some((arg) => HELP_FLAGS.has(arg))) {
        process.stdout.write(DEMO_AGENT_USAGE);
        return 0;
      }
      const { runDemoAgent } = await import("../agents/demo/demo-agent.ts");
      const { demoHostOf } = await import("../agents/demo/demo-host.ts");
      await runDemoAgent(demoHostOf(rest));
      return 0;
    }
    case "--version":
    case "-v":
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case "--help":
    case "-h":
    case "help":
      process.stdout.write(USAGE);
      return 0;
    default: {
      const meant = nearestWord(command, COMMANDS);
      process.stderr.write(`acp-remote: unknown command "${command}"${meant === undefined ? "" : `, did you mean ${meant}?`} (see acp-remote --help)\n`);
      return 2;
    }
  }
}

async function runServe(args: string[]): Promise<number> {
  let options: ReturnType<typeof parseServeArgs>;
  try {
    // An agent of the registry: the list is refreshed first (bounded; the cache or the snapshot otherwise).
    const peek = peekServeArgs(args);
    let registry;
    if (peek.registryAgents) {
      const { loadSidecarRegistry } = await import("../agents/registry.ts");
      registry = await loadSidecarRegistry({ dataDir: peek.dataDir });
    }
    options = parseServeArgs(args, process.env, registry);
  } catch (error) {
    // One line: the usage is one --help away, and printed here it would bury the error.
    process.stderr.write(`acp-remote serve: ${error instanceof Error ? error.message : String(error)} (see acp-remote serve --help)\n`);
    return 2;
  }
  // Read once: agents and terminals must never find the token in an environment they inherit.
  delete process.env[TOKEN_ENV];
  if (options === "help") {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  if (options.control !== "stdio") {
    // Before the store opens and the agents start (and say so): a port in use is then the first and only line.
    const { probeListen } = await import("./port-probe.ts");
    const unavailable = options.port === 0 ? undefined : await probeListen(options.host, options.port);
    if (unavailable !== undefined) {
      process.stderr.write(`acp-remote serve: ${describeStartError(unavailable, options)}\n`);
      return 1;
    }
  }
  if (options.registryAgents) {
    const { describeRegistrySource } = await import("../agents/registry.ts");
    const { loaded, agents } = options.registryAgents;
    for (const a of agents) {
      const spec = options.agents.find((s) => s.name === a.name);
      process.stderr.write(`acp-remote: agent ${a.name} is ${a.id} ${a.version} from ${describeRegistrySource(loaded)}: ${[spec?.command, ...(spec?.args ?? [])].join(" ")}\n`);
    }
  }
  if (options.control === "stdio") {
    const { runControlled } = await import("../control/control-server.ts");
    // 0 after shutdown + exit, 1 when the editor vanished (LSP's rule).
    return runControlled(options);
  }
  const { serve, TOKEN_FILE } = await import("../server/serve.ts");
  const { pairingBanner } = await import("./pairing-banner.ts");
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve(options);
  } catch (error) {
    process.stderr.write(`acp-remote serve: ${describeStartError(error, options)}\n`);
    return 1;
  }
  // Scripts wait for this exact first line.
  process.stdout.write(`acp-remote listening on ${server.url}\n`);
  // Which acp-remote a log comes from, and on which Node: the first thing to ask of a report.
  process.stderr.write(`acp-remote ${VERSION} on Node ${process.versions.node}\n`);
  process.stderr.write(
    await pairingBanner({
      url: server.url,
      ...(server.publicUrls.first() === undefined ? {} : { publicUrl: server.publicUrls.first()!.url }),
      host: options.host,
      token: options.auth ? (server.generatedToken ?? options.tokens.find((t): t is string => typeof t === "string")) : undefined,
      tokenFile: server.generatedToken === undefined ? undefined : join(options.dataDir, TOKEN_FILE),
      tty: process.stderr.isTTY === true,
    }),
  );
  if (options.agents.length === 0) {
    process.stderr.write("acp-remote: running the embedded demo agent; add --agent NAME=COMMAND for a real one\n");
  }
  await stopOnSignal(server);
  return 0;
}

type StopSignal = "SIGINT" | "SIGTERM";

/** The next SIGINT or SIGTERM; until it comes, neither ends the process by itself. */
function nextSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const onInt = (): void => got("SIGINT");
    const onTerm = (): void => got("SIGTERM");
    const got = (signal: StopSignal): void => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(signal);
    };
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
}

/**
 * SIGINT (a person at the terminal) stops at once. SIGTERM (a service manager,
 * a rolling deploy) drains first: the port stops accepting, /readyz answers
 * "draining" so a load balancer sends nothing new, and running prompt turns get
 * up to DEFAULT_DRAIN_TIMEOUT_MS to end on the connections they run on. A second
 * signal during the drain stops at once. Either way the server then closes as
 * always: streams end, connections detach, sessions stay loadable.
 */
async function stopOnSignal(server: RunningServer): Promise<void> {
  const signal = await nextSignal();
  if (signal === "SIGTERM") {
    const drained = server.drain();
    // Written once /readyz already answers "draining".
    process.stderr.write(`acp-remote: SIGTERM, draining: no new connections; running turns have ${DEFAULT_DRAIN_TIMEOUT_MS / 1000} s to end (SIGTERM or SIGINT again stops at once)\n`);
    const outcome = await Promise.race([drained, nextSignal()]);
    if (outcome === true) process.stderr.write("acp-remote: no turn runs, stopping\n");
    else if (outcome === false) process.stderr.write("acp-remote: turns still running at the end of the drain, stopping\n");
    else process.stderr.write(`acp-remote: ${outcome} during the drain, stopping now\n`);
  } else {
    process.stderr.write(`acp-remote: ${signal}, stopping\n`);
  }
  await server.close();
}

function describeStartError(error: unknown, options: ServeOptions): string {
  const code = (error as { code?: unknown }).code;
  if (code === "EADDRINUSE") return `port ${options.port} on ${options.host} is already in use: stop what uses it, or pick another with --port (0 picks a free one)`;
  if (code === "EACCES") return `not allowed to listen on ${options.host}:${options.port}: pick a port above 1023 with --port`;
  return error instanceof Error ? error.message : String(error);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`acp-remote: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
