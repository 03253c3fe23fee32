// `acp-remote connect <url>`: the stdio ACP agent an editor spawns (Zed,
// JetBrains, Neovim, Emacs all spawn their agents over stdio), relaying to a
// remote server over the ACP remote transport. Newline-delimited JSON-RPC on
// stdin/stdout; the log on stderr.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Readable, Writable } from "node:stream";
import { describeArgumentError } from "../common/argument-errors.ts";
import { NdjsonLineError, NdjsonMessageReader, NdjsonMessageWriter } from "../common/ndjson.ts";
import { endpointUrl, TransportKind } from "./index.ts";
import { ExitCode } from "./exit-code.ts";
import { Relay } from "./relay.ts";
import { errorResponse, ErrorCode, validateMessage, type JsonRpcMessage } from "../protocol/jsonrpc.ts";
import { DEFAULT_CLIENT_MAX_MESSAGE_BYTES, DEFAULT_RECONNECT_GIVE_UP_MS } from "./limits.ts";

const CONNECT_USAGE = `Usage: acp-remote connect <url> [options]

A stdio ACP agent for editors: reads JSON-RPC from stdin, relays it to the
acp-remote server at <url> (e.g. http://127.0.0.1:8765 or https://host/acp),
writes the answers to stdout, logs to stderr.

Options:
  --token TOKEN           bearer token (default: env ACP_REMOTE_TOKEN)
  --transport KIND        http (Streamable HTTP), ws (WebSocket) or auto (default: auto,
                          Streamable HTTP and WebSocket when the server has only that)
  --agent NAME            the server's agent to use (default: the server's default agent)
  --insecure              accept any TLS certificate (self-signed servers)
  --ca FILE               trust this PEM certificate authority too
  --header "NAME: VALUE"  an extra header on every request; repeatable
  --reconnect-timeout S   give up reconnecting after S seconds (default ${DEFAULT_RECONNECT_GIVE_UP_MS / 1000})
  --help                  this text

Exit codes: 0 stdin closed, 1 server unreachable or reconnect gave up,
2 bad arguments, 3 credentials refused.
`;

export interface ConnectIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

export interface ConnectArgs {
  url: string;
  token: string | undefined;
  transport: TransportKind;
  insecure: boolean;
  ca: string | undefined;
  headers: Record<string, string>;
  reconnectGiveUpMs: number;
}

class UsageError extends Error {}

const CONNECT_OPTIONS = {
  token: { type: "string" },
  transport: { type: "string" },
  agent: { type: "string" },
  insecure: { type: "boolean" },
  ca: { type: "string" },
  header: { type: "string", multiple: true },
  "reconnect-timeout": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function parseConnectArgs(argv: string[], env: NodeJS.ProcessEnv): ConnectArgs | "help" {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof CONNECT_OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: CONNECT_OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeArgumentError(error, CONNECT_OPTIONS));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return "help";
  const envToken = env["ACP_REMOTE_TOKEN"];
  const token = values.token ?? (envToken !== undefined && envToken !== "" ? envToken : undefined);

  const kind = values.transport ?? TransportKind.Auto;
  if (kind !== TransportKind.Http && kind !== TransportKind.WebSocket && kind !== TransportKind.Auto) {
    throw new UsageError(`--transport must be http, ws or auto, not "${kind}"`);
  }

  let ca: string | undefined;
  if (values.ca !== undefined) {
    try {
      ca = readFileSync(values.ca, "utf8");
    } catch (error) {
      throw new UsageError(`cannot read --ca ${values.ca}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const headers: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const colon = h.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header wants "NAME: VALUE", not "${h}"`);
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }

  let reconnectGiveUpMs = DEFAULT_RECONNECT_GIVE_UP_MS;
  if (values["reconnect-timeout"] !== undefined) {
    const v = values["reconnect-timeout"];
    const seconds = Number(v);
    if (v.trim() === "" || !Number.isFinite(seconds) || seconds < 0) throw new UsageError(`--reconnect-timeout wants seconds, not "${v}"`);
    reconnectGiveUpMs = seconds * 1000;
  }

  if (positionals.length > 1) throw new UsageError(`one URL only (got "${positionals[0]}" and "${positionals[1]}")`);
  const url = positionals[0];
  if (url === undefined) throw new UsageError("the server URL is missing");
  let endpoint: URL;
  try {
    endpoint = new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL`);
  }
  if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") throw new UsageError(`the URL must be http:// or https://, not ${endpoint.protocol}`);
  if (values.agent !== undefined) endpoint.searchParams.set("agent", values.agent);
  return { url: endpointUrl(endpoint).toString(), token, transport: kind, insecure: values.insecure === true, ca, headers, reconnectGiveUpMs };
}

export async function runConnect(argv: string[], io: ConnectIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const log = (line: string): void => {
    io.stderr.write(`acp-remote connect: ${line}\n`);
  };
  let args: ConnectArgs | "help";
  try {
    args = parseConnectArgs(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // One line: the usage is one --help away, and printed here it would bury the error.
    io.stderr.write(`acp-remote connect: ${error.message} (see acp-remote connect --help)\n`);
    return ExitCode.Usage;
  }
  if (args === "help") {
    io.stdout.write(CONNECT_USAGE);
    return ExitCode.Ok;
  }

  const writer = new NdjsonMessageWriter(io.stdout);
  const reader = new NdjsonMessageReader(io.stdin, { maxLineBytes: DEFAULT_CLIENT_MAX_MESSAGE_BYTES });
  let lastWrite: Promise<void> = Promise.resolve();
  const toEditor = (message: JsonRpcMessage): void => {
    lastWrite = writer.write(message).catch(() => {
      // The editor is gone; stdin's end stops the relay.
    });
  };
  const relay = new Relay(toEditor, {
    url: args.url,
    transport: {
      transport: args.transport,
      ...(args.token !== undefined ? { token: args.token } : {}),
      insecure: args.insecure,
      ...(args.ca !== undefined ? { ca: args.ca } : {}),
      headers: args.headers,
    },
    log,
    reconnectGiveUpMs: args.reconnectGiveUpMs,
  });

  // A line that is not JSON-RPC is answered as JSON-RPC says (-32700 / -32600,
  // id null when none can be read) and the relay goes on.
  reader.onError((error) => {
    if (error instanceof NdjsonLineError && error.reason === "too-deep") {
      // A request is answered -32600; an answer already failed the request it answers, a notification gets none.
      log(error.message);
      if (error.requestId !== undefined) toEditor(errorResponse(error.requestId, ErrorCode.InvalidRequest, `acp-remote connect: ${error.message}`));
    } else if (error instanceof NdjsonLineError) {
      log(error.message);
      toEditor(errorResponse(null, ErrorCode.ParseError, `acp-remote connect: ${error.message}`));
    } else {
      log(`stdin: ${error.message}`);
    }
  });
  reader.onClose(() => {
    void relay.end();
  });
  reader.listen((data) => {
    const checked = validateMessage(data);
    if (!checked.ok) {
      log(`ignored an invalid message: ${checked.reason}`);
      const id = (data as { id?: unknown }).id;
      toEditor(errorResponse(typeof id === "string" || typeof id === "number" ? id : null, ErrorCode.InvalidRequest, `acp-remote connect: ${checked.reason}`));
      return;
    }
    relay.fromEditor(checked.message);
  });
  io.stdout.on("error", () => void relay.end());

  const code = await relay.done;
  reader.dispose();
  await lastWrite;
  if (io.stdout !== process.stdout) writer.end();
  // Nothing more is read: let the process exit even if the editor keeps stdin open.
  if (io.stdin === process.stdin) process.stdin.destroy();
  return code;
}
