// The `acp-remote` command: `serve` (the sidecar), `connect` (a stdio ACP
// endpoint for editors that talks the remote transport), `demo-agent` (the
// embedded demo agent on stdio, which `serve` spawns when no agent is given).
import { DEFAULT_HOST, DEFAULT_PORT, defaultDataDir, type ServeOptions } from "../server/options.ts";
import { parseServeArgs } from "./serve-args.ts";
import { VERSION } from "../../protocol/version.ts";

const USAGE = `acp-remote ${VERSION}

Usage:
  acp-remote serve [options]        start the sidecar: /acp (ACP remote transport) and /v1 on one port
  acp-remote connect <url> [opts]   a stdio ACP agent for editors, relaying to a remote acp-remote server
  acp-remote demo-agent             the embedded demo agent, on stdio
  acp-remote --version | --help

serve options:
  --host HOST              address to bind (default ${DEFAULT_HOST})
  --port PORT              port (default ${DEFAULT_PORT}; 0 picks a free one)
  --agent NAME=COMMAND     an ACP agent started over stdio; repeatable; the first is the default
                           (default: the embedded demo agent)
  --token TOKEN            accepted bearer token; repeatable (env ACP_REMOTE_TOKEN); when none is
                           given one is generated, kept in the data folder and printed to stderr
  --no-auth                accept requests without a token (loopback hosts only)
  --tls                    serve HTTPS with a self-signed certificate kept in the data folder
  --cert FILE --key FILE   serve HTTPS with this certificate and key
  --allow-origin ORIGIN    a browser origin allowed to call the server; repeatable
  --upstream-url URL       an OpenAI-compatible provider whose models /v1 passes through
                           (key from env ACP_REMOTE_UPSTREAM_KEY)
  --data-dir DIR           sessions, journals, deferred results, certificate
                           (default ${defaultDataDir()})
  --control stdio          be hosted by an editor over the control protocol on stdio

connect options: see \`acp-remote connect --help\`.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return runServe(rest);
    case "connect": {
      const { runConnect } = await import("../../client/connect.ts");
      return runConnect(rest);
    }
    case "demo-agent": {
      const { runDemoAgent } = await import("../agents/demo/demo-agent.ts");
      await runDemoAgent();
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
    default:
      process.stderr.write(`acp-remote: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

async function runServe(args: string[]): Promise<number> {
  let options: ReturnType<typeof parseServeArgs>;
  try {
    options = parseServeArgs(args);
  } catch (error) {
    process.stderr.write(`acp-remote serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (options.control === "stdio") {
    const { runControlled } = await import("../control/control-server.ts");
    // 0 after shutdown + exit, 1 when the editor vanished (LSP's rule).
    return runControlled(options);
  }
  const { serve } = await import("../server/serve.ts");
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve(options);
  } catch (error) {
    process.stderr.write(`acp-remote serve: ${describeStartError(error, options)}\n`);
    return 1;
  }
  // Scripts wait for this exact first line.
  process.stdout.write(`acp-remote listening on ${server.url}\n`);
  if (server.generatedToken !== undefined) {
    process.stderr.write(`acp-remote: access token (kept in ${options.dataDir}): ${server.generatedToken}\n`);
  }
  if (options.agents.length === 0) {
    process.stderr.write("acp-remote: running the embedded demo agent; add --agent NAME=COMMAND for a real one\n");
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      process.stderr.write(`acp-remote: ${signal}, stopping\n`);
      resolve();
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  await server.close();
  return 0;
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
