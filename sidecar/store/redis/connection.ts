// The connection to Redis and whether it is there. Two clients: one for
// commands and one, its duplicate, for the event channel (a subscribed
// connection can send nothing else).
//
// A store that cannot be reached must not hold requests: there is no offline
// queue (a command while the connection is down fails at once), every call
// has a deadline (a server that stops answering fails it too), and every such
// failure is a StoreUnavailableError, which /acp and /v1 answer with 503 and
// Retry-After. Meanwhile the clients reconnect by themselves, backing off up
// to DEFAULT_STORE_RECONNECT_MAX_MS, and the subscriber subscribes again.
import { createHash } from "node:crypto";
import { createClient, ErrorReply } from "redis";
import { StoreUnavailableError } from "../shared-store.ts";
import {
  DEFAULT_STORE_COMMAND_TIMEOUT_MS,
  DEFAULT_STORE_CONNECT_TIMEOUT_MS,
  DEFAULT_STORE_RECONNECT_MAX_MS,
  DEFAULT_STORE_RECONNECT_MIN_MS,
  DEFAULT_STORE_RETRY_AFTER_S,
  DEFAULT_STORE_START_TIMEOUT_MS,
} from "../limits.ts";
import type { Log } from "../../../protocol/log-line.ts";
import { listen } from "../../../common/listeners.ts";

function newClient(url: string, options: Parameters<typeof createClient>[0]) {
  return createClient({ ...options, url });
}
type Client = ReturnType<typeof newClient>;
type Subscriber = ReturnType<Client["duplicate"]>;
/** What both clients have that the connection watches and closes. */
interface AnyClient {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly isReady: boolean;
  readonly isOpen: boolean;
  close(): Promise<void>;
  destroy(): void;
}

/** A reply of EVAL or of a plain command, as RESP2 gives it: strings, integers, nil and arrays of them. */
export type Reply = string | number | null | Reply[];

/**
 * Replies of a server that is there but cannot serve now (loading its
 * data after a restart, a replica cut off from its primary, a script
 * running too long): the same to the caller as a server that is gone.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/;

/** A Lua script, run by its SHA1 (EVALSHA), and sent whole only when the server does not know it yet. */
export class LuaScript {
  readonly source: string;
  readonly sha: string;
  constructor(source: string) {
    this.source = source;
    this.sha = createHash("sha1").update(source).digest("hex");
  }
}

export interface ConnectionOptions {
  log: Log;
  /** How long to keep trying at start, in milliseconds (tests shorten it). */
  startTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** With rediss://, PEM certificates the server's certificate must chain to; the system's CAs when absent. */
  ca?: string;
}

/** The address of the store as it may be logged: no user name, no password. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "the configured Redis address";
  }
}

export class RedisConnection {
  readonly #client: Client;
  readonly #subscriber: Subscriber;
  readonly #where: string;
  readonly #log: Log;
  readonly #commandTimeoutMs: number;
  readonly #listeners = new Set<(available: boolean) => void>();
  #available = false;
  /** Both clients connected once: from then on, changes of availability are told. */
  #opened = false;
  #closed = false;

  private constructor(client: Client, subscriber: Subscriber, where: string, options: ConnectionOptions) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#where = where;
    this.#log = options.log;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_STORE_COMMAND_TIMEOUT_MS;
  }

  /**
   * Connects both clients; rejects with a clear error when Redis cannot be
   * reached within DEFAULT_STORE_START_TIMEOUT_MS (a wrong address or a
   * server that is not there should stop `serve`, not leave it waiting).
   */
  static async open(url: string, options: ConnectionOptions): Promise<RedisConnection> {
    const where = redactedUrl(url);
    const deadline = Date.now() + (options.startTimeoutMs ?? DEFAULT_STORE_START_TIMEOUT_MS);
    let started = false;
    const reconnectStrategy = (retries: number, cause: Error): number | Error => {
      if (!started && Date.now() >= deadline) return new Error(`cannot reach the Redis store at ${where}: ${cause.message}`);
      const wait = Math.min(DEFAULT_STORE_RECONNECT_MIN_MS * 2 ** Math.min(retries, 16), DEFAULT_STORE_RECONNECT_MAX_MS);
      // Jitter, so that the nodes of a cluster do not all come back at the same instant.
      return Math.round(wait * (0.75 + Math.random() * 0.5));
    };
    const client = newClient(url, {
      // RESP2: replies as plain arrays, and any Redis from 2.6 on understands it.
      RESP: 2,
      disableOfflineQueue: true,
      commandOptions: { timeout: options.commandTimeoutMs ?? DEFAULT_STORE_COMMAND_TIMEOUT_MS },
      // rediss:// is TLS: the server's certificate is checked, against `ca` when given.
      socket: {
        connectTimeout: DEFAULT_STORE_CONNECT_TIMEOUT_MS,
        reconnectStrategy,
        ...(url.startsWith("rediss:") ? { tls: true as const, ...(options.ca === undefined ? {} : { ca: options.ca }) } : {}),
      },
    });
    const subscriber = client.duplicate();
    const connection = new RedisConnection(client, subscriber, where, options);
    connection.#watch(client, true);
    connection.#watch(subscriber, false);
    try {
      await client.connect();
      await subscriber.connect();
    } catch (error) {
      client.destroy();
      subscriber.destroy();
      const cause = error instanceof Error ? error.message : String(error);
      throw new Error(cause.includes(where) ? cause : `cannot reach the Redis store at ${where}: ${cause}`, { cause: error });
    }
    started = true;
    connection.#opened = true;
    connection.#available = client.isReady;
    return connection;
  }

  /** Every client has an 'error' listener (one without it would crash the process); availability follows the command client. */
  #watch(client: AnyClient, main: boolean): void {
    client.on("error", () => {
      if (main) this.#update();
    });
    if (!main) return;
    for (const event of ["ready", "reconnecting", "end"]) client.on(event, () => this.#update());
  }

  #update(): void {
    if (!this.#opened) return;
    const now = !this.#closed && this.#client.isReady;
    if (now === this.#available) return;
    this.#available = now;
    if (!this.#closed) this.#log(now ? `store: Redis at ${this.#where} is reachable again` : `store: Redis at ${this.#where} cannot be reached; reconnecting`, now ? "info" : "warn");
    for (const listener of [...this.#listeners]) listener(now);
  }

  available(): boolean {
    return this.#available;
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    return listen(this.#listeners, listener);
  }

  #unavailable(why: string): StoreUnavailableError {
    return new StoreUnavailableError(`the Redis store at ${this.#where} cannot be reached: ${why}`, DEFAULT_STORE_RETRY_AFTER_S);
  }

  /** A failure of the connection (or of a server that cannot serve now) becomes StoreUnavailableError; an error of the command itself stays. */
  #translate(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) return error;
    if (error instanceof ErrorReply && !TRANSIENT_REPLY.test(error.message)) return error;
    return this.#unavailable(error instanceof Error ? error.message : String(error));
  }

  /** One command, failed fast with StoreUnavailableError when the store is not there or does not answer in time. */
  async command(args: Array<string | number>): Promise<Reply> {
    return this.#run((client) => client.sendCommand(args.map(String)) as Promise<Reply>);
  }

  /** Several commands in one MULTI/EXEC: all or none of them apply. */
  async transaction(commands: Array<Array<string | number>>): Promise<Reply[]> {
    return this.#run(async (client) => {
      const multi = client.multi();
      for (const args of commands) multi.addCommand(args.map(String));
      return (await multi.exec()) as unknown as Reply[];
    });
  }

  /** Runs `script` (EVALSHA, then EVAL the first time the server lacks it). */
  async eval(script: LuaScript, keys: string[], args: Array<string | number>): Promise<Reply> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    return this.#run(async (client) => {
      try {
        return (await client.sendCommand(["EVALSHA", script.sha, ...tail])) as Reply;
      } catch (error) {
        if (!(error instanceof ErrorReply && error.message.startsWith("NOSCRIPT"))) throw error;
        return (await client.sendCommand(["EVAL", script.source, ...tail])) as Reply;
      }
    });
  }

  async #run<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    if (this.#closed) throw this.#unavailable("the store is closed");
    if (!this.#client.isReady) throw this.#unavailable("not connected");
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.#unavailable(`no reply within ${this.#commandTimeoutMs} ms`)), this.#commandTimeoutMs);
    });
    try {
      return await Promise.race([fn(this.#client), deadline]);
    } catch (error) {
      throw this.#translate(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Subscribes the subscriber client to `channel` (again after each reconnect, by the client itself). */
  async subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    await this.#subscriber.subscribe(channel, onMessage);
  }

  /** Closes both clients: pending replies are awaited for at most the command timeout, then the sockets are cut. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#update();
    await Promise.all([this.#quit(this.#subscriber), this.#quit(this.#client)]);
  }

  async #quit(client: AnyClient): Promise<void> {
    if (!client.isOpen) {
      client.destroy();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#commandTimeoutMs)));
    try {
      await Promise.race([client.close(), late]);
    } catch {
      // Closed already: nothing to wait for.
    } finally {
      clearTimeout(timer);
      client.destroy();
    }
  }
}
