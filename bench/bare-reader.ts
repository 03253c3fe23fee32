// An agent process alone, read by a bare line reader: no server, no client
// library, only the agent's stdout cut into lines and each line parsed (as any
// reader must). What it counts is what the agent emits, the most any relay of
// that agent can deliver; the relay suite measures it beside the relays in the
// same run.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { tmpdir } from "node:os";
import { Acp, PROTOCOL_VERSION } from "../protocol/acp.ts";
import type { AgentSpec } from "../protocol/agent-spec.ts";
import { countUpdate, startTurn, type Turn, turnResult, type TurnResult } from "./wire-client.ts";

const NEWLINE = 0x0a;

export class BareAgentReader {
  readonly #spec: AgentSpec;
  #child: ChildProcessWithoutNullStreams | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, (message: Record<string, unknown>) => void>();
  #turn: Turn | undefined;
  #sessionId: string | undefined;
  #partial: Buffer[] = [];

  constructor(spec: AgentSpec) {
    this.#spec = spec;
  }

  /** Spawns the agent, then initialize and session/new. */
  async open(): Promise<void> {
    const child = spawn(this.#spec.command, this.#spec.args, { stdio: ["pipe", "pipe", "ignore"] as never, env: { ...process.env, ...this.#spec.env } }) as ChildProcessWithoutNullStreams;
    this.#child = child;
    child.stdout.on("data", (chunk: Buffer) => this.#read(chunk));
    child.once("exit", () => {
      for (const settle of this.#pending.values()) settle({ error: { message: "the agent exited" } });
      this.#pending.clear();
    });
    await this.#call(Acp.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const created = await this.#call(Acp.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
    const sessionId = (created["result"] as { sessionId?: unknown } | undefined)?.sessionId;
    if (typeof sessionId !== "string") throw new Error(`session/new answered no sessionId: ${JSON.stringify(created)}`);
    this.#sessionId = sessionId;
  }

  /** One prompt turn; resolves with its response, counting the updates read before it. */
  async prompt(text: string): Promise<TurnResult> {
    const turn = startTurn();
    this.#turn = turn;
    const response = await this.#call(Acp.agent.session.prompt, { sessionId: this.#sessionId, prompt: [{ type: "text", text }] });
    this.#turn = undefined;
    return turnResult(turn, response);
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin.end();
    child.kill("SIGTERM");
    await exited;
  }

  #call(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#child?.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  #read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end);
      start = end + 1;
      const line = this.#partial.length === 0 ? piece : Buffer.concat([...this.#partial, piece]);
      this.#partial = [];
      if (line.length > 0) this.#line(line.toString("utf8"));
    }
    if (start < chunk.length) this.#partial.push(chunk.subarray(start));
  }

  #line(text: string): void {
    const message = JSON.parse(text) as Record<string, unknown>;
    if (message["method"] === Acp.client.session.update) {
      countUpdate(this.#turn, text);
      return;
    }
    const id = message["id"];
    if (message["method"] !== undefined || typeof id !== "number") return;
    const settle = this.#pending.get(id);
    this.#pending.delete(id);
    settle?.(message);
  }
}
