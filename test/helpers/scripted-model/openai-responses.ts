// OpenAI's Responses API (`POST …/responses`) as the scripted model endpoint
// speaks it: response.created, an assistant message item with output_text
// deltas, a function call item (or a custom tool call, whose input is free
// text), each added and done, then response.completed with its usage.
import { textOf, type ConversationEntry, type ModelTurn } from "./script.ts";
import type { TurnWriter } from "./wire.ts";

type Item = Record<string, unknown>;

export function responsesEntries(body: Record<string, unknown>): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  const input = body["input"];
  const items: Item[] = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : ((input as Item[] | undefined) ?? []);
  for (const item of items) {
    const type = item["type"] ?? "message";
    if (type === "function_call_output" || type === "custom_tool_call_output") entries.push({ kind: "tool_result", text: textOf(item["output"]) });
    else if (type === "function_call") entries.push({ kind: "tool_call", name: String(item["name"]), input: String(item["arguments"]) });
    else if (type === "custom_tool_call") entries.push({ kind: "tool_call", name: String(item["name"]), input: String(item["input"]) });
    else if (type === "message" && item["role"] === "user") entries.push({ kind: "user", text: textOf(item["content"]) });
    else if (type === "message" && item["role"] === "assistant") entries.push({ kind: "assistant", text: textOf(item["content"]) });
  }
  return entries;
}

const USAGE = { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 32 };

export function writeResponses(turn: ModelTurn, write: TurnWriter, id: string, model: string): Promise<void> | void {
  const text = (turn.text ?? []).join("");
  const call = turn.toolCall;
  const output: Item[] = [];
  const message: Item = { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  if (text) output.push(message);
  let callItem: Item | undefined;
  if (call) {
    callItem =
      typeof call.arguments === "string"
        ? { type: "custom_tool_call", id: `ctc_${id}`, call_id: `call_${id}`, name: call.name, input: call.arguments, status: "completed" }
        : { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, name: call.name, arguments: JSON.stringify(call.arguments), status: "completed" };
    output.push(callItem);
  }
  const response = (status: string, out: Item[]) => ({ id: `resp_${id}`, object: "response", created_at: Math.floor(Date.now() / 1000), model, status, output: out, usage: status === "completed" ? USAGE : null });
  if (!write.streamed) {
    write.json(response("completed", output));
    return;
  }
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) => write.event({ type, sequence_number: seq++, ...data }, type);
  event("response.created", { response: response("in_progress", []) });
  let index = 0;
  if (turn.text?.length) {
    event("response.output_item.added", { output_index: index, item: { ...message, status: "in_progress", content: [] } });
    event("response.content_part.added", { item_id: message["id"], output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    for (const delta of turn.text) event("response.output_text.delta", { item_id: message["id"], output_index: index, content_index: 0, delta });
    if (turn.hold) return write.hold();
    event("response.output_text.done", { item_id: message["id"], output_index: index, content_index: 0, text });
    event("response.content_part.done", { item_id: message["id"], output_index: index, content_index: 0, part: { type: "output_text", text, annotations: [] } });
    event("response.output_item.done", { output_index: index, item: message });
    index++;
  }
  if (callItem) {
    event("response.output_item.added", { output_index: index, item: { ...callItem, status: "in_progress" } });
    event("response.output_item.done", { output_index: index, item: callItem });
  }
  event("response.completed", { response: response("completed", output) });
  write.end();
}
