// Google's Gemini API (`POST …/models/MODEL:streamGenerateContent?alt=sse`,
// and `:generateContent` unstreamed) as the scripted model endpoint speaks
// it: each event a GenerateContentResponse whose candidate carries the next
// text part, then a functionCall part, the last one with its finishReason
// and usage.
import { textOf, type ConversationEntry, type ModelTurn } from "./script.ts";
import type { TurnWriter } from "./wire.ts";

type Part = Record<string, unknown>;

export function geminiEntries(body: Record<string, unknown>): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  for (const content of (body["contents"] as Array<{ role?: string; parts?: Part[] }> | undefined) ?? []) {
    for (const part of content.parts ?? []) {
      const call = part["functionCall"] as { name: string; args: unknown } | undefined;
      const response = part["functionResponse"] as { response: unknown } | undefined;
      if (response) entries.push({ kind: "tool_result", text: textOf(response.response) });
      else if (call) entries.push({ kind: "tool_call", name: call.name, input: JSON.stringify(call.args) });
      else if (typeof part["text"] === "string") entries.push({ kind: content.role === "model" ? "assistant" : "user", text: part["text"] });
    }
  }
  return entries;
}

const USAGE = { promptTokenCount: 12, candidatesTokenCount: 20, totalTokenCount: 32 };

export function writeGemini(turn: ModelTurn, write: TurnWriter, _id: string, model: string): Promise<void> | void {
  const call = turn.toolCall;
  const callPart = call ? { functionCall: { name: call.name, args: call.arguments } } : undefined;
  const response = (parts: Part[], last: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last ? { usageMetadata: USAGE } : {}),
    modelVersion: model,
  });
  if (!write.streamed) {
    const text = (turn.text ?? []).join("");
    write.json(response([...(text ? [{ text }] : []), ...(callPart ? [callPart] : [])], true));
    return;
  }
  const pieces = turn.text ?? [];
  for (const [i, piece] of pieces.entries()) {
    const last = i === pieces.length - 1 && !callPart && !turn.hold;
    write.event(response([{ text: piece }], last));
  }
  if (turn.hold) return write.hold();
  if (callPart) write.event(response([callPart], true));
  else if (pieces.length === 0) write.event(response([{ text: "" }], true));
  write.end();
}
