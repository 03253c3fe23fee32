// The fast flood agent: a stdio ACP agent (newline-delimited JSON-RPC) that
// costs next to nothing per update, so that a relay in front of it shows its
// own cost rather than the agent's. A prompt turn writes pre-serialized
// `session/update` lines, FLOOD_BATCH_UPDATES of them per write (waiting for
// `drain` when the pipe is full), then its response. It speaks the bench's
// prompt language (prompt-script.ts) and just enough ACP for a relay to follow
// it: initialize, session/new, session/prompt; session/cancel and other
// notifications are ignored, other requests answer -32601.
//
// The SDK-written agent (test/fixtures/agent.ts) stays the other agent of the
// bench: it is what a real agent built with the SDK emits.
//
// Run: node bench/fast-agent.ts (with --cpu-prof, SIGTERM still ends it cleanly).
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Acp, PROTOCOL_VERSION } from "../protocol/acp.ts";
import { ErrorCode } from "../protocol/jsonrpc.ts";
import { parsePromptScript, updateMessage } from "./prompt-script.ts";

/** Updates written per write() of a flood: about 64 KiB of 290-byte lines, the size of a pipe's buffer. */
export const FLOOD_BATCH_UPDATES = 224;

interface Request {
  id?: string | number | null;
  method?: string;
  params?: { sessionId?: string; prompt?: Array<{ type?: string; text?: string }> };
}

const out = process.stdout;
const sessions = new Set<string>();

function line(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

function result(id: Request["id"], value: unknown): string {
  return line({ jsonrpc: "2.0", id, result: value });
}

/** Writes one chunk; resolves at once, or when the pipe took what it holds. */
async function write(chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, "drain");
}

async function prompt(request: Request): Promise<void> {
  const sessionId = request.params?.sessionId ?? "";
  const text = (request.params?.prompt ?? []).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
  const script = parsePromptScript(text);
  const done = result(request.id, { stopReason: "end_turn" });
  if (script.kind === "echo") {
    await write(`${updateMessage(sessionId, script.text)}\n${done}`);
    return;
  }
  const update = `${updateMessage(sessionId, "x".repeat(script.bytes))}\n`;
  const batch = update.repeat(FLOOD_BATCH_UPDATES);
  let left = script.count;
  while (left >= FLOOD_BATCH_UPDATES) {
    await write(batch);
    left -= FLOOD_BATCH_UPDATES;
  }
  await write(`${update.repeat(left)}${done}`);
}

/** Turns run one after another, in the order their requests came. */
let turns: Promise<void> = Promise.resolve();

function handle(request: Request): void {
  if (request.id === undefined || request.method === undefined) return; // notifications and responses
  switch (request.method) {
    case Acp.agent.initialize:
      void write(result(request.id, { protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: false }, agentInfo: { name: "acp-remote-bench-fast-agent", version: "1.0.0" } }));
      return;
    case Acp.agent.session.new: {
      const sessionId = `fast-${randomUUID()}`;
      sessions.add(sessionId);
      void write(result(request.id, { sessionId }));
      return;
    }
    case Acp.agent.session.prompt:
      turns = turns.then(() => prompt(request)).catch((error: unknown) => {
        void write(line({ jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidParams, message: (error as Error).message } }));
      });
      return;
    default:
      void write(line({ jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.MethodNotFound, message: `${request.method} is not served by the fast agent` } }));
  }
}

let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  const text = buffered + chunk;
  let start = 0;
  for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
    const one = text.slice(start, end).trim();
    start = end + 1;
    if (one.length > 0) handle(JSON.parse(one) as Request);
  }
  buffered = text.slice(start);
});
process.stdin.on("end", () => process.exit(0));
// The hub ends agents with SIGTERM; a clean exit lets --cpu-prof write its profile.
process.on("SIGTERM", () => process.exit(0));
