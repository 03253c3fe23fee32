// Relay throughput on a setup of the cluster benchmark: one WebSocket client
// (the transport's WebSocket profile, the bearer token in its header) with one
// session, and a prompt turn in which the fixture agent floods `updates`
// agent_message_chunks (test/fixtures/agent.ts, `flood N BYTES`). The client
// parses every message and counts the session/updates that reach it until
// the turn's response. A session may be created here (session/new) or loaded
// (session/load) when another node is its home: then every update comes over
// the node-to-node link.
import { WebSocket } from "ws";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { ACP_PATH, Acp, Header, PROTOCOL_VERSION } from "../protocol/acp.ts";
import { DEFAULT_JOURNAL_FLUSH_MS } from "../sidecar/limits.ts";
import type { ClusterBenchConfig } from "./cluster-config.ts";
import { processCpuMicros, type RedisProbe } from "./cluster-setups.ts";
import { floodPrompt } from "./prompt-script.ts";
import { withTimeout } from "./wire-client.ts";
import type { Setup } from "./cluster-report.ts";

/** Time to open a client and its session, in milliseconds. */
const OPEN_TIMEOUT_MS = 30_000;
/**
 * After a turn's response, how long CPU time keeps counting, in
 * milliseconds: work deferred past the response is part of what the turn cost.
 */
const CPU_SETTLE_MS = 2 * DEFAULT_JOURNAL_FLUSH_MS;

export interface Turn {
  updates: number;
  /** Milliseconds from sending the prompt to its response. */
  ms: number;
  /** Texts of the agent_message_chunks, when asked for. */
  texts: string[];
  error?: string;
}

/** One WebSocket connection to /acp with one session. */
export class RelayClient {
  readonly #ws: WebSocket;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  #turn: Turn | undefined;
  #keepTexts = false;
  #sessionId: string | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data, binary) => {
      if (!binary) this.#onMessage(data.toString());
    });
    ws.on("close", () => this.#fail(new Error("the WebSocket closed")));
    ws.on("error", (error) => this.#fail(error));
  }

  static async open(base: string, token: string): Promise<RelayClient> {
    const url = new URL(ACP_PATH, base);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url, { headers: { [Header.Authorization]: `Bearer ${token}` }, perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`the WebSocket upgrade answered HTTP ${res.statusCode}`)));
    });
    const client = new RelayClient(ws);
    await client.#call(Acp.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "acp-remote-bench-cluster", version: "1" } });
    return client;
  }

  async newSession(): Promise<string> {
    const result = (await this.#call(Acp.agent.session.new, { cwd: tmpdir(), mcpServers: [] })) as { sessionId: string };
    this.#sessionId = result.sessionId;
    return result.sessionId;
  }

  async loadSession(sessionId: string): Promise<void> {
    await this.#call(Acp.agent.session.load, { sessionId, cwd: tmpdir(), mcpServers: [] });
    this.#sessionId = sessionId;
  }

  async prompt(text: string, keepTexts = false): Promise<Turn> {
    if (this.#sessionId === undefined) throw new Error("no session");
    const turn: Turn = { updates: 0, ms: 0, texts: [] };
    this.#turn = turn;
    this.#keepTexts = keepTexts;
    const start = performance.now();
    try {
      await this.#call(Acp.agent.session.prompt, { sessionId: this.#sessionId, prompt: [{ type: "text", text }] });
    } catch (error) {
      turn.error = (error as Error).message;
    }
    turn.ms = performance.now() - start;
    this.#turn = undefined;
    return turn;
  }

  close(): void {
    this.#ws.terminate();
  }

  #call(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (message) => {
          const error = message["error"] as { message?: string } | undefined;
          if (error !== undefined) reject(new Error(`${method}: ${error.message ?? JSON.stringify(error)}`));
          else resolve(message["result"]);
        },
        reject,
      });
      this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }), (error) => {
        if (error) reject(error);
      });
    });
  }

  #onMessage(text: string): void {
    const message = JSON.parse(text) as Record<string, unknown>;
    if (message["method"] === Acp.client.session.update) {
      const turn = this.#turn;
      if (turn === undefined) return;
      const update = (message["params"] as { update?: { sessionUpdate?: string; content?: { text?: string } } }).update;
      // The server's own notices (a first prompt's title, a session's state) are not the agent's updates.
      if (update?.sessionUpdate === "session_info_update" || update?.sessionUpdate === "state_update") return;
      turn.updates++;
      if (this.#keepTexts) {
        if (update?.sessionUpdate === "agent_message_chunk" && typeof update.content?.text === "string") turn.texts.push(update.content.text);
      }
      return;
    }
    if (message["method"] !== undefined) return;
    const pending = typeof message["id"] === "number" ? this.#pending.get(message["id"]) : undefined;
    if (pending === undefined) return;
    this.#pending.delete(message["id"] as number);
    pending.resolve(message);
  }

  #fail(error: Error): void {
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
  }
}

/** The parent of a process (an agent's parent is the sidecar that started it), from /proc. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Which sidecar's agent answers the session's turns: the pid of its parent. */
export async function servingNode(client: RelayClient): Promise<number> {
  const turn = await client.prompt("pid", true);
  const pid = Number(turn.texts.find((t) => t.startsWith("pid: "))?.slice("pid: ".length));
  if (!Number.isInteger(pid)) throw new Error(`the agent told no pid (${turn.error ?? turn.texts.join(" ")})`);
  return parentOf(pid);
}

export interface RelayRoute {
  setup: Setup;
  /** Opens the client and its session; `note` says which node serves it. */
  open(): Promise<{ client: RelayClient; note: string }>;
  /** The setup's sidecars, whose CPU time is summed around a turn. */
  nodePids(): Array<number | undefined>;
  redis?: RedisProbe;
}

export interface RelayRun {
  rate: number;
  /** CPU per update of the setup's sidecars together, and of its Redis, in microseconds. */
  nodeCpu: number;
  redisCpu: number;
  lost: number;
  error?: string;
}

export async function openRelay(route: RelayRoute, config: ClusterBenchConfig["relay"]): Promise<{ client: RelayClient; note: string }> {
  const opened = await withTimeout(route.open(), OPEN_TIMEOUT_MS, `${route.setup}: open`);
  const warm = await withTimeout(opened.client.prompt(floodPrompt(config.warmup, config.bytes)), config.turnTimeoutMs, `${route.setup}: warm-up`);
  if (warm.error !== undefined) {
    opened.client.close();
    throw new Error(`${route.setup}: the warm-up turn failed: ${warm.error}`);
  }
  return opened;
}

export async function relayRun(route: RelayRoute, client: RelayClient, config: ClusterBenchConfig["relay"]): Promise<RelayRun> {
  const cpu = (): number => route.nodePids().reduce<number>((sum, pid) => sum + processCpuMicros(pid), 0);
  const nodeBefore = cpu();
  const redisBefore = (await route.redis?.cpuMicros()) ?? Number.NaN;
  const turn = await withTimeout(client.prompt(floodPrompt(config.updates, config.bytes)), config.turnTimeoutMs, `${route.setup}: flood`);
  await new Promise((r) => setTimeout(r, CPU_SETTLE_MS));
  const nodeCpu = (cpu() - nodeBefore) / config.updates;
  const redisCpu = (((await route.redis?.cpuMicros()) ?? Number.NaN) - redisBefore) / config.updates;
  return {
    rate: turn.updates / (turn.ms / 1000),
    nodeCpu,
    redisCpu,
    lost: config.updates - turn.updates,
    ...(turn.error !== undefined ? { error: turn.error } : {}),
  };
}
