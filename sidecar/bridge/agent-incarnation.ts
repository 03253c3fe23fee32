// One spawned process of an agent and what hangs off it: the ACP connection
// over its stdio (newline-delimited JSON-RPC through vscode-jsonrpc, ACP's
// `$/cancel_request`), the requests waiting on it in both directions, and the
// tail of its stderr. The supervisor (agent-process.ts) decides what a spawn,
// an exit or a failure means; this file only does the wiring.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import {
  CancellationTokenSource,
  createMessageConnection,
  Message,
  ResponseError,
  type NotificationMessage,
  type CancellationId,
  type CancellationToken,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { Acp } from "../../protocol/acp.ts";
import { ErrorCode, errorResponse } from "../../protocol/jsonrpc.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { tooDeepReason } from "../../common/json-depth.ts";
import { NdjsonLineError, NdjsonMessageReader, NdjsonMessageWriter, type NotificationBatch } from "../../common/ndjson.ts";
import { ReadPacing } from "../../common/read-pacing.ts";
import { DEFAULT_AGENT_EXIT_DRAIN_MS, DEFAULT_AGENT_READ_WAIT_MS, DEFAULT_MAX_JSON_DEPTH } from "../limits.ts";
import { agentEnvironment } from "../agents/adaptations.ts";
import { acpCancellationStrategy, acpCancelReceiver } from "./acp-cancellation.ts";
import { DirectUpdates } from "./direct-updates.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { Log } from "../../protocol/log-line.ts";

/** Synthetic method of the reader's batches; never sent on the wire. */
const UPDATE_BATCH_METHOD = "$/acp-remote/notifications";
const BATCHED_NOTIFICATIONS: ReadonlySet<string> = new Set([Acp.client.session.update]);
/** Where a `session/update` carries a chunk's text. */
const UPDATE_TEXT_FIELD: readonly string[] = ["params", "update", "content", "text"];

/** The notifications DirectUpdates may handle ahead of the connection: a reader's batch of updates, or one update. */
function isUpdates(message: Message): boolean {
  return Message.isNotification(message) && (message.method === UPDATE_BATCH_METHOD || BATCHED_NOTIFICATIONS.has(message.method));
}

/** Stderr lines kept to explain a crash. */
const STDERR_TAIL_LINES = 5;

export interface Incarnation {
  readonly child: ChildProcessWithoutNullStreams;
  readonly generation: number;
  readonly connection: MessageConnection;
  /** Requests we sent that wait for an answer: failed when the process dies. */
  readonly pending: Set<(failure: RpcFailure) => void>;
  /** Requests the agent sent that our handler is serving: aborted when the process dies. */
  readonly inbound: Set<AbortController>;
  readonly stderrTail: string[];
  exited: boolean;
  /** Why initialize failed, when it did (the process is then killed). */
  initFailure?: string;
}

export interface IncarnationHooks {
  log: Log;
  /** One request of the agent; throw RpcFailure for a JSON-RPC error. */
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  notification(method: string, params: unknown): void;
  /** The process runs (the `spawn` event). */
  spawned(incarnation: Incarnation): void;
  /** The command could not be run at all (ENOENT, EACCES): not worth a retry. */
  spawnFailed(incarnation: Incarnation, message: string): void;
  exited(incarnation: Incarnation, code: number | null, signal: NodeJS.Signals | null): void;
}

/** Spawns the agent in a process group of its own and wires its stdio; throws what spawn() throws. */
export function spawnIncarnation(spec: AgentSpec, generation: number, maxLineBytes: number, hooks: IncarnationHooks): Incarnation {
  const { name, command, args, cwd } = spec;
  const child = spawn(command, args, {
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group, so that stop() and crashes end the agent's
    // children too (kill(-pid)).
    detached: true,
    // None of the server's own variables (its token, keys, store address): the agent gets only what its spec names;
    // a published agent's adaptations (sidecar/agents/adaptations.ts) apply on top.
    env: agentEnvironment(spec),
    ...(cwd !== undefined ? { cwd } : {}),
  });
  // The agent's next read waits for the client streams its updates filled (common/read-pacing.ts).
  const pacing = new ReadPacing(DEFAULT_AGENT_READ_WAIT_MS);
  const say = (message: string): void => hooks.log(`agent ${name}: ${message}`, "warn");
  const notify = (method: string, params: unknown): void => {
    try {
      hooks.notification(method, params);
    } catch (error) {
      say(`handling ${method} failed: ${(error as Error).message}`);
    }
  };
  const deliver = (method: string, params: unknown): void =>
    pacing.deliver(() => {
      // The updates of one read, in one event-loop turn (see NdjsonReaderOptions).
      if (method === UPDATE_BATCH_METHOD) for (const m of (params as NotificationBatch).messages) notify(m.method, m.params);
      else notify(method, params);
    });
  // Updates read while the connection holds nothing undispatched are handled at once (direct-updates.ts).
  const direct = new DirectUpdates(isUpdates, (message) => deliver((message as NotificationMessage).method, (message as NotificationMessage).params));
  const reader = new NdjsonMessageReader(child.stdout, {
    maxLineBytes,
    batchNotifications: { method: UPDATE_BATCH_METHOD, of: BATCHED_NOTIFICATIONS },
    // An update relayed unchanged goes out as the agent wrote it (common/ndjson.ts `lineReadFor`).
    keepLines: BATCHED_NOTIFICATIONS,
    // A flood of text chunks is one line but for the text: read without a full parse each (common/line-templates.ts).
    templateField: UPDATE_TEXT_FIELD,
    maxDepth: DEFAULT_MAX_JSON_DEPTH,
    pacing,
    takeNow: (message) => direct.take(message),
  });
  const writer = new NdjsonMessageWriter(child.stdin);
  const inboundSources = new Map<CancellationId, CancellationTokenSource>();
  const cancelReceiver = acpCancelReceiver(inboundSources);
  const connection = createMessageConnection(reader, writer, { error: say, warn: say, info: () => {}, log: () => {} }, {
    cancellationStrategy: acpCancellationStrategy(inboundSources),
    messageStrategy: {
      handleMessage: (message, next) => {
        direct.dispatched();
        return cancelReceiver.handleMessage(message, next);
      },
    },
  });
  connection.onDispose(() => direct.close());
  const incarnation: Incarnation = { child, generation, connection, pending: new Set(), inbound: new Set(), stderrTail: [], exited: false };

  reader.onError((error) => {
    say(error.message);
    // A request the reader skipped as too deep reaches no handler: it is answered here, or the agent would wait forever.
    if (error instanceof NdjsonLineError && error.requestId !== undefined) {
      writer.write(errorResponse(error.requestId, ErrorCode.InvalidRequest, tooDeepReason(DEFAULT_MAX_JSON_DEPTH))).catch(() => undefined);
    }
  });
  writer.onError(([error]) => say(`write failed: ${error.message}`));
  connection.onRequest((method: string, params: unknown, token) => serveInbound(incarnation, hooks, method, params, token));
  connection.onNotification(deliver);
  connection.listen();

  child.stderr.on("error", (error) => say(`stderr: ${error.message}`));
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (line) => {
    incarnation.stderrTail.push(line);
    if (incarnation.stderrTail.length > STDERR_TAIL_LINES) incarnation.stderrTail.shift();
    // The agent's own stderr: its levels are its own, it is neither a warning nor an error of ours.
    hooks.log(`[${name}] ${line}`, "info");
  });

  let spawnFailed = false;
  child.once("error", (error) => {
    // Emitted instead of `spawn` when the command cannot be run (ENOENT, EACCES).
    if (child.pid === undefined) {
      spawnFailed = true;
      incarnation.exited = true;
      const message = spawnErrorMessage(name, command, error);
      failPending(incarnation, RpcFailure.internal(message));
      connection.dispose();
      hooks.spawnFailed(incarnation, message);
    } else {
      say(error.message);
    }
  });
  child.once("spawn", () => hooks.spawned(incarnation));
  child.once("exit", (code, signal) => {
    if (spawnFailed) return;
    // `exit` can come before the last lines the agent wrote are read: its stdout closing (`close`) says they are.
    let told = false;
    const tell = (): void => {
      if (told) return;
      told = true;
      clearTimeout(timer);
      hooks.exited(incarnation, code, signal);
    };
    const timer = setTimeout(tell, DEFAULT_AGENT_EXIT_DRAIN_MS);
    child.once("close", tell);
  });
  return incarnation;
}

/**
 * Sends one request on the incarnation. The agent's error answers become
 * RpcFailure with its code and message. Aborting `signal` sends ACP
 * `$/cancel_request`; the agent still answers (cancellation is cooperative).
 */
export function sendRequest(incarnation: Incarnation, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const fail = (failure: RpcFailure): void => reject(failure);
    incarnation.pending.add(fail);
    const source = new CancellationTokenSource();
    const onAbort = (): void => source.cancel();
    if (signal?.aborted) source.cancel();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (): void => {
      incarnation.pending.delete(fail);
      signal?.removeEventListener("abort", onAbort);
      source.dispose();
    };
    incarnation.connection.sendRequest(method, params, source.token).then(
      (result) => {
        settle();
        resolve(result);
      },
      (error: unknown) => {
        settle();
        reject(error instanceof ResponseError ? new RpcFailure(error.code, error.message, error.data) : RpcFailure.from(error));
      },
    );
  });
}

/** Fails every request waiting on the incarnation (its process died) with `failure`. */
export function failPending(incarnation: Incarnation, failure: RpcFailure): void {
  const pending = [...incarnation.pending];
  incarnation.pending.clear();
  for (const fail of pending) fail(failure);
}

async function serveInbound(incarnation: Incarnation, hooks: IncarnationHooks, method: string, params: unknown, token: CancellationToken): Promise<unknown> {
  const controller = new AbortController();
  incarnation.inbound.add(controller);
  const cancelled = (): void => controller.abort(new RpcFailure(ErrorCode.RequestCancelled, "the agent cancelled the request"));
  const subscription = token.onCancellationRequested(cancelled);
  if (token.isCancellationRequested) cancelled();
  try {
    const result = await hooks.request(method, params, controller.signal);
    return result === undefined ? null : result;
  } catch (error) {
    // The one place where a host failure becomes the agent's JSON-RPC error.
    const failure = RpcFailure.from(error);
    throw new ResponseError(failure.code, failure.message, failure.data);
  } finally {
    subscription.dispose();
    incarnation.inbound.delete(controller);
  }
}

export function spawnErrorMessage(name: string, command: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `agent ${name}: cannot start ${JSON.stringify(command)}: command not found`;
  if (code === "EACCES") return `agent ${name}: cannot start ${JSON.stringify(command)}: permission denied`;
  return `agent ${name}: cannot start ${JSON.stringify(command)}: ${(error as Error).message}`;
}
