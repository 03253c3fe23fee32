// Newline-delimited JSON framing for vscode-jsonrpc: the framing ACP agents
// speak on stdio (one JSON-RPC message per line, UTF-8). The pair has the shape
// of vscode-jsonrpc's own readers and writers, so `createMessageConnection`
// takes them as it takes its Content-Length ones.
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  Disposable,
  type DataCallback,
  type Message,
  type MessageReader,
  type MessageWriter,
} from "vscode-jsonrpc/node";
import { ErrorCode, type JsonRpcId } from "../protocol/jsonrpc.ts";
import { DEFAULT_MAX_JSON_DEPTH, jsonValueDeeperThan, minCharsDeeperThan, tooDeepReason } from "./json-depth.ts";
import { LineTemplates } from "./line-templates.ts";
import type { ReadPacing } from "./read-pacing.ts";

/** Longest line read when the reader is given no limit (agents on stdio, the editor of `connect`), in bytes. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/** A line the reader skipped; reported through `onError`, the connection goes on. */
export class NdjsonLineError extends Error {
  readonly reason: "too-long" | "not-json" | "too-deep";
  /** A request skipped as too deep: its id, for the owner to answer -32600 (nobody else will answer it). */
  readonly requestId: JsonRpcId | undefined;
  constructor(reason: "too-long" | "not-json" | "too-deep", message: string, requestId?: JsonRpcId) {
    super(message);
    this.name = "NdjsonLineError";
    this.reason = reason;
    this.requestId = requestId;
  }
}

export interface NdjsonReaderOptions {
  /** Longest line accepted, in bytes (newline excluded). */
  maxLineBytes?: number;
  /**
   * Delivers consecutive notifications of these methods that arrive in one read
   * as ONE notification of `method` whose params are `{ messages }`, in order.
   * vscode-jsonrpc dispatches one message per event-loop turn; an agent that
   * floods `session/update` would otherwise cost a turn (and a socket write
   * downstream) per update. Requests, responses and other notifications (such
   * as `$/cancel_request`, which the connection's message strategy must see)
   * are never batched, and order is kept.
   */
  batchNotifications?: { method: string; of: ReadonlySet<string> };
  /**
   * Notifications of these methods keep the line they were read from (see
   * `lineReadFor`) when it holds exactly `jsonrpc`, `method` and `params` and no
   * carriage return: a relay that forwards one unchanged writes the sender's
   * own text instead of serializing the message again.
   */
  keepLines?: ReadonlySet<string>;
  /**
   * Of the notifications `keepLines` keeps, the path to the one string that
   * varies from line to line of a flood (an update's text): a line of a shape
   * read before around another string there is read without a full parse
   * (common/line-templates.ts), into the same value. Anything else is parsed.
   */
  templateField?: readonly string[];
  /**
   * Levels of arrays and objects a message may nest (common/json-depth.ts). A
   * deeper response is delivered as an error response (-32600) to the request
   * it answers, which then fails instead of waiting; a deeper request or
   * notification is skipped and reported through `onError`.
   */
  maxDepth?: number;
  /**
   * The next read also waits for what the messages of the last one built up
   * downstream (common/read-pacing.ts): the delivery of this reader's
   * messages runs through `pacing.deliver`.
   */
  pacing?: ReadPacing;
  /**
   * Offered each message (batch) before the connection, in the order read:
   * true when it handled the message itself, which the connection then never
   * sees (sidecar/bridge/direct-updates.ts).
   */
  takeNow?: (message: Message) => boolean;
}

/** Params of a batch notification (see `NdjsonReaderOptions.batchNotifications`). */
export interface NotificationBatch {
  messages: Array<{ method: string; params?: unknown }>;
}

/**
 * Where a kept line hangs: on the params object parsed from it. A shallow copy
 * of the params (spread copies symbol keys too) says the same line only while
 * its members are the very same values; one with another `sessionId` is not
 * taken for it. A symbol is neither serialized nor listed by Object.keys.
 */
const KEPT_LINE = Symbol("ndjson line");

interface KeptLine {
  method: string;
  /** The params parsed from the line: a copy says the same line only with the very same members. */
  params: Record<string, unknown>;
  /** How many keys those params have. */
  keys: number;
  text: string;
}

/**
 * Counts enumerable keys, up to `limit` + 1, without making an array. Parsed
 * and spread objects inherit none; were the prototype polluted, the count
 * would only come out higher and the line not be used.
 */
function keyCountUpTo(value: object, limit: number): number {
  let n = 0;
  for (const _ in value) if (++n > limit) break;
  return n;
}

/**
 * The line a notification was read from, when the reader kept it and
 * `message` says exactly that line: `{jsonrpc: "2.0", method, params}` with the
 * params parsed from it, or a shallow copy of them with the very same members
 * (same method, no other key). Equal JSON, possibly spaced or ordered
 * differently. Valid while nobody changes the params' members in place.
 */
export function lineReadFor(message: object): string | undefined {
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (typeof params !== "object" || params === null) return undefined;
  const kept = (params as { [KEPT_LINE]?: KeptLine })[KEPT_LINE];
  if (kept === undefined || kept.method !== method || (message as { jsonrpc?: unknown }).jsonrpc !== "2.0" || keyCountUpTo(message, 3) !== 3) return undefined;
  if (params !== kept.params && !sameMembers(params as Record<string, unknown>, kept)) return undefined;
  return kept.text;
}

/** A shallow copy of the kept params with as many keys, each holding the very same value. */
function sameMembers(copy: Record<string, unknown>, kept: KeptLine): boolean {
  let n = 0;
  for (const key in copy) {
    if (++n > kept.keys || copy[key] !== kept.params[key] || !(key in kept.params)) return false;
  }
  return n === kept.keys;
}

export class NdjsonMessageReader extends AbstractMessageReader implements MessageReader {
  private readonly readable: NodeJS.ReadableStream;
  private readonly maxLineBytes: number;
  private readonly batch: NdjsonReaderOptions["batchNotifications"];
  private readonly keepLines: ReadonlySet<string> | undefined;
  private readonly templates: LineTemplates | undefined;
  private readonly maxDepth: number;
  /** Lines shorter than this cannot nest deeper than maxDepth, and are not walked. */
  private readonly minDeepChars: number;
  private readonly pacing: ReadPacing | undefined;
  private readonly takeNow: ((message: Message) => boolean) | undefined;
  /** Messages parsed from the read being handled, delivered when it is done. */
  private parsed: Message[] = [];
  /** Bytes of the line being received, in the chunks they came in. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while the rest of an over-long line is thrown away. */
  private discarding = false;
  private callback: DataCallback | undefined;
  /** Paused until the next event-loop turn (see `pace`). */
  private pausedForTurn = false;

  constructor(readable: NodeJS.ReadableStream, options: NdjsonReaderOptions = {}) {
    super();
    this.readable = readable;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.batch = options.batchNotifications;
    this.keepLines = options.keepLines;
    this.templates = options.keepLines !== undefined && options.templateField !== undefined ? new LineTemplates(options.templateField) : undefined;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.minDeepChars = minCharsDeeperThan(this.maxDepth);
    this.pacing = options.pacing;
    this.takeNow = options.takeNow;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer | string): void => this.onData(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
    const onError = (error: Error): void => this.fireError(error);
    // `end` and `close` both mean the peer is gone; report it once.
    let closed = false;
    const onClose = (): void => {
      if (closed) return;
      closed = true;
      this.fireClose();
    };
    this.readable.on("data", onData);
    this.readable.on("error", onError);
    this.readable.on("end", onClose);
    this.readable.on("close", onClose);
    return Disposable.create(() => {
      this.callback = undefined;
      this.readable.off("data", onData);
      this.readable.off("error", onError);
      this.readable.off("end", onClose);
      this.readable.off("close", onClose);
    });
  }

  private onData(chunk: Buffer): void {
    // A newline byte never occurs inside a multi-byte UTF-8 sequence, so lines
    // are cut on bytes and decoded whole: a character split across chunks is
    // joined before it is decoded.
    // The end of a line begun in an earlier chunk, on bytes.
    let start = this.pendingBytes > 0 || this.discarding ? this.takeLine(chunk, 0) : 0;
    // The complete lines of the rest: decoded at once and cut in the string,
    // which costs less than a buffer and a decode per line. A chunk no longer
    // than the line limit cannot hold a line over it.
    const last = chunk.lastIndexOf(NEWLINE);
    if (last >= start && chunk.length - start <= this.maxLineBytes) {
      const text = chunk.toString("utf8", start, last);
      let from = 0;
      for (;;) {
        const end = text.indexOf("\n", from);
        this.handleLine(end === -1 ? text.slice(from) : text.slice(from, end));
        if (end === -1) break;
        from = end + 1;
      }
      start = last + 1;
    }
    // What is left line by line on bytes: a chunk over the line limit, and the
    // start of a line that the next chunk ends.
    while (start < chunk.length) start = this.takeLine(chunk, start);
    const parsed = this.parsed;
    this.parsed = [];
    this.deliver(parsed);
    if (parsed.length > 0) this.pace();
  }

  /**
   * Adds the bytes from `start` up to the next newline to the line being
   * received and, when the newline is there, ends that line. Returns where the
   * rest of the chunk begins (its length when no newline followed).
   */
  private takeLine(chunk: Buffer, start: number): number {
    const end = chunk.indexOf(NEWLINE, start);
    if (end === -1) {
      this.append(chunk.subarray(start));
      return chunk.length;
    }
    this.append(chunk.subarray(start, end));
    this.endLine();
    return end + 1;
  }

  /**
   * One read per event-loop turn: the next read waits until the turn after,
   * once the connection has dispatched this one (vscode-jsonrpc dispatches one
   * message per turn). Read eagerly, an agent that writes faster than the
   * relay forwards piled its parsed messages up in the connection's queue, all
   * of which outlived the young generation: a flood of 20,000 updates held
   * 150 MB and the garbage collector's threads spent 3-4 µs an update; paced,
   * 62 MB and about 1 µs. The agent's pipe fills instead, and the agent waits
   * on its write: the backpressure a pipe is for. With `pacing`, the next
   * read also waits for the backlogs this one built downstream.
   */
  private pace(): void {
    const readable = this.readable;
    if (this.pausedForTurn) return;
    this.pausedForTurn = true;
    readable.pause();
    const resume = (): void => {
      this.pausedForTurn = false;
      // Disposed meanwhile: nobody reads, so the stream stays paused.
      if (this.callback !== undefined) readable.resume();
    };
    setImmediate(() => {
      // The connection dispatched this read's first message in the turn before: what it left backlogged is known.
      const backlogs = this.pacing?.beforeRead();
      if (backlogs === undefined) resume();
      else void backlogs.then(resume);
    });
  }

  private deliver(messages: Message[]): void {
    const batch = this.batch;
    if (batch === undefined) {
      for (const message of messages) this.handOver(message);
      return;
    }
    let run: Message[] = [];
    const flushRun = (): void => {
      if (run.length === 1) this.handOver(run[0]!);
      else if (run.length > 1) this.handOver({ jsonrpc: "2.0", method: batch.method, params: { messages: run } } as Message);
      run = [];
    };
    for (const message of messages) {
      const m = message as { method?: unknown; id?: unknown };
      if (typeof m.method === "string" && m.id === undefined && batch.of.has(m.method)) {
        run.push(message);
      } else {
        flushRun();
        this.handOver(message);
      }
    }
    flushRun();
  }

  /** To `takeNow` if it takes it, else to the connection; nobody once the reader was disposed. */
  private handOver(message: Message): void {
    const callback = this.callback;
    if (callback === undefined || this.takeNow?.(message) === true) return;
    callback(message);
  }

  private append(part: Buffer): void {
    if (part.length === 0 || this.discarding) return;
    if (this.pendingBytes + part.length > this.maxLineBytes) {
      this.fireError(new NdjsonLineError("too-long", `skipped a line longer than ${this.maxLineBytes} bytes`));
      this.pending = [];
      this.pendingBytes = 0;
      this.discarding = true;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.handleLine(line.toString("utf8"));
  }

  /** One line, without its newline: parsed, or reported and skipped. */
  private handleLine(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.length === 0) return;
    // A line of a learned shape is that shape's value: JSON, within the depth bound, a kept notification.
    const templated = this.templates?.match(text);
    if (templated !== undefined) {
      this.keep(templated, text, false);
      this.parsed.push(templated as Message);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.fireError(new NdjsonLineError("not-json", `skipped a line that is not JSON: ${preview(text)}`));
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.fireError(new NdjsonLineError("not-json", `skipped a line that is not a JSON-RPC message: ${preview(text)}`));
      return;
    }
    // Parsed first, then walked: on this path a walk costs less than a scan
    // of the text (common/json-depth.ts), and a short line needs neither.
    if (text.length >= this.minDeepChars && jsonValueDeeperThan(value, this.maxDepth)) {
      this.refuseDeep(value as { id?: unknown; method?: unknown }, text);
      return;
    }
    if (this.keepLines !== undefined) this.keep(value as { jsonrpc?: unknown; method?: unknown; params?: unknown }, text);
    this.parsed.push(value as Message);
  }

  /** A message nested deeper than maxDepth: never delivered as it is (see `NdjsonReaderOptions.maxDepth`). */
  private refuseDeep(message: { id?: unknown; method?: unknown }, text: string): void {
    const reason = tooDeepReason(this.maxDepth);
    const id = message.id;
    const hasId = typeof id === "string" || typeof id === "number";
    if (message.method === undefined && hasId) {
      this.fireError(new NdjsonLineError("too-deep", `an answer to request ${JSON.stringify(id)} failed: ${reason}: ${preview(text)}`));
      this.parsed.push({ jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: reason } } as Message);
      return;
    }
    const what = typeof message.method === "string" ? `a ${JSON.stringify(message.method)} message` : "a message";
    this.fireError(new NdjsonLineError("too-deep", `skipped ${what}: ${reason}: ${preview(text)}`, hasId && typeof message.method === "string" ? id : undefined));
  }

  /** Hangs the line on a kept notification's params; with `learn`, a line that was parsed may teach its shape. */
  private keep(message: { jsonrpc?: unknown; method?: unknown; params?: unknown }, text: string, learn = true): void {
    const { method, params } = message;
    if (typeof method !== "string" || !this.keepLines?.has(method) || typeof params !== "object" || params === null || Array.isArray(params)) return;
    if (message.jsonrpc !== "2.0" || keyCountUpTo(message, 3) !== 3) return;
    // A carriage return between tokens is JSON whitespace, but it ends a line of
    // an SSE event: such a line is serialized again rather than passed on.
    if (text.includes("\r")) return;
    const kept: KeptLine = { method, params: params as Record<string, unknown>, keys: keyCountUpTo(params, Number.POSITIVE_INFINITY), text };
    (params as { [KEPT_LINE]?: KeptLine })[KEPT_LINE] = kept;
    if (learn) this.templates?.learn(text);
  }
}

/** What a write the stream took at once returns: one settled promise, shared. */
const WRITTEN: Promise<void> = Promise.resolve();

function preview(text: string): string {
  return text.length <= 80 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 80))}…`;
}

/**
 * Writes one message per line. Messages go out one at a time in the order they
 * were given; when the stream's buffer is full the next write waits for `drain`.
 * While nothing waits, a message is written at once, in the caller's turn: an
 * agent then starts on a prompt while the server still answers the POST that
 * brought it, instead of a microtask after.
 */
export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private readonly writable: NodeJS.WritableStream;
  /** The write that waits for `drain`, or the last one queued behind it; undefined when none waits. */
  private waiting: Promise<void> | undefined;
  private errorCount = 0;
  private closed = false;

  constructor(writable: NodeJS.WritableStream) {
    super();
    this.writable = writable;
    writable.on("error", (error: Error) => this.fireError(error));
    writable.on("close", () => {
      this.closed = true;
      this.fireClose();
    });
  }

  write(message: Message): Promise<void> {
    const waiting = this.waiting;
    const result = waiting === undefined ? this.send(message) : waiting.then(() => this.send(message));
    if (result !== WRITTEN) {
      // The chain itself never rejects, so one failed write does not fail the next.
      const settled = result.catch(() => undefined);
      this.waiting = settled;
      void settled.then(() => {
        if (this.waiting === settled) this.waiting = undefined;
      });
    }
    return result === WRITTEN
      ? result
      : result.catch((error: unknown) => {
          this.errorCount++;
          this.fireError(error, message, this.errorCount);
          throw error;
        });
  }

  /** Writes the message now: WRITTEN when the stream took it, or a promise that settles on `drain` or fails. */
  private send(message: Message): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the stream is closed"));
    // The stream calls back later, never in write(); its `error` event reports a failure too (above).
    let fail: ((error: Error) => void) | undefined;
    let ok: boolean;
    try {
      ok = this.writable.write(JSON.stringify(message) + "\n", "utf8", (error?: Error | null) => {
        if (error) fail?.(error);
      });
    } catch (error) {
      // A message that cannot be serialized (a cycle): it alone fails.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (ok) return WRITTEN;
    return new Promise<void>((resolve, reject) => {
      fail = reject;
      const done = (): void => {
        this.writable.off("drain", done);
        this.writable.off("close", done);
        if (this.closed) reject(new Error("the stream closed while a write waited for drain"));
        else resolve();
      };
      this.writable.on("drain", done);
      this.writable.on("close", done);
    });
  }

  end(): void {
    this.writable.end();
  }
}
