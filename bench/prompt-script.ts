// The two prompt commands the benchmarks send, in the fixture agent's prompt
// language (test/fixtures/agent.ts): `flood <n> <bytes>` (n agent_message_chunk
// updates of <bytes> characters) and `echo <text>` (one update). The raw
// baseline and the SDK agent understand the same two, so that every server
// relays the same messages.
import { Acp } from "../protocol/acp.ts";

export type PromptScript = { kind: "flood"; count: number; bytes: number } | { kind: "echo"; count: 1; text: string; bytes: number };

export function floodPrompt(count: number, bytes: number): string {
  return `flood ${count} ${bytes}`;
}

export function echoPrompt(text: string): string {
  return `echo ${text}`;
}

export function parsePromptScript(text: string): PromptScript {
  const [command, ...rest] = text.trim().split(" ");
  if (command === "flood") return { kind: "flood", count: Number(rest[0] ?? 0), bytes: Number(rest[1] ?? 0) };
  if (command === "echo") return { kind: "echo", count: 1, text: rest.join(" "), bytes: 0 };
  throw new Error(`unknown bench prompt ${JSON.stringify(text)}`);
}

/** The JSON text of one agent_message_chunk update, as the agents write it. */
export function updateMessage(sessionId: string, text: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: Acp.client.session.update,
    params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
  });
}
