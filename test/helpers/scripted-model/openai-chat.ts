// OpenAI's Chat Completions (`POST …/chat/completions`) as the scripted model
// endpoint speaks it: `chat.completion.chunk` events with content deltas and
// a tool call whose arguments arrive in pieces, the finish reason, a usage
// chunk, then `[DONE]`; one `chat.completion` when no stream is asked for.
import { chunks, textOf, type ConversationEntry, type ModelTurn } from "./script.ts";
import type { TurnWriter } from "./wire.ts";

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ function: { name: string; arguments: string } }>;
}

export function chatEntries(body: Record<string, unknown>): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  for (const message of (body["messages"] as ChatMessage[] | undefined) ?? []) {
    if (message.role === "tool") entries.push({ kind: "tool_result", text: textOf(message.content) });
    else if (message.role === "user") entries.push({ kind: "user", text: textOf(message.content) });
    else if (message.role === "assistant") {
      if (message.content) entries.push({ kind: "assistant", text: textOf(message.content) });
      for (const call of message.tool_calls ?? []) entries.push({ kind: "tool_call", name: call.function.name, input: call.function.arguments });
    }
  }
  return entries;
}

const USAGE = { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 };

export function writeChat(turn: ModelTurn, write: TurnWriter, id: string, model: string): Promise<void> | void {
  const text = (turn.text ?? []).join("");
  const call = turn.toolCall;
  const args = call === undefined ? "" : typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
  const finish = call ? "tool_calls" : "stop";
  const base = { id: `chatcmpl-${id}`, created: Math.floor(Date.now() / 1000), model };
  if (!write.streamed) {
    const message: Record<string, unknown> = { role: "assistant", content: text || null };
    if (call) message["tool_calls"] = [{ id: `call_${id}`, type: "function", function: { name: call.name, arguments: args } }];
    write.json({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage: USAGE });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    write.event({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }] });
  chunk({ role: "assistant", content: "" });
  for (const piece of turn.text ?? []) chunk({ content: piece });
  if (turn.hold) return write.hold();
  if (call) {
    chunk({ tool_calls: [{ index: 0, id: `call_${id}`, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const part of chunks(args, 24)) chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] });
  }
  chunk({}, finish);
  write.event({ ...base, object: "chat.completion.chunk", choices: [], usage: USAGE });
  write.data("[DONE]");
  write.end();
}
