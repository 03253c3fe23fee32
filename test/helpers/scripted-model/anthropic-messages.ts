// The Anthropic Messages API (`POST /v1/messages`) as the scripted model
// endpoint speaks it: a request read as conversation entries, a turn written
// as its server-sent events (message_start, content blocks with text and
// input_json deltas, message_delta with the stop reason, message_stop), or
// as one JSON message when the request does not ask for a stream.
import { chunks, textOf, type ConversationEntry, type ModelTurn } from "./script.ts";
import type { TurnWriter } from "./wire.ts";

type Block = Record<string, unknown>;

export function anthropicEntries(body: Record<string, unknown>): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  for (const message of (body["messages"] as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    const blocks: Block[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : ((message.content as Block[]) ?? []);
    for (const block of blocks) {
      if (block["type"] === "tool_result") entries.push({ kind: "tool_result", text: textOf(block["content"]) });
      else if (block["type"] === "tool_use") entries.push({ kind: "tool_call", name: String(block["name"]), input: JSON.stringify(block["input"]) });
      else if (block["type"] === "text") entries.push({ kind: message.role === "assistant" ? "assistant" : "user", text: String(block["text"]) });
    }
  }
  return entries;
}

const USAGE = { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

export function writeAnthropic(turn: ModelTurn, write: TurnWriter, id: string, model: string): Promise<void> | void {
  const text = (turn.text ?? []).join("");
  const call = turn.toolCall;
  const stop = call ? "tool_use" : "end_turn";
  if (!write.streamed) {
    const content: Block[] = [];
    if (text) content.push({ type: "text", text });
    if (call) content.push({ type: "tool_use", id: `toolu_${id}`, name: call.name, input: call.arguments });
    write.json({ id: `msg_${id}`, type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage: USAGE });
    return;
  }
  const event = (type: string, data: Record<string, unknown>) => write.event({ type, ...data }, type);
  event("message_start", { message: { id: `msg_${id}`, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: USAGE } });
  let index = 0;
  if (turn.text?.length) {
    event("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const chunk of turn.text) event("content_block_delta", { index, delta: { type: "text_delta", text: chunk } });
    if (turn.hold) return write.hold();
    event("content_block_stop", { index });
    index++;
  }
  if (call) {
    event("content_block_start", { index, content_block: { type: "tool_use", id: `toolu_${id}`, name: call.name, input: {} } });
    for (const part of chunks(JSON.stringify(call.arguments), 24)) event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
    event("content_block_stop", { index });
  }
  event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  event("message_stop", {});
  write.end();
}
