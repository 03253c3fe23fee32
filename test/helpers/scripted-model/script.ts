// What the scripted model endpoint answers: a script is the model's side of
// one prompt, a list of model turns. The first turn answers the request that
// carries the prompt (found by its trigger, a phrase of the prompt); each
// later turn answers the request that carries one more tool result. A turn is
// chosen from the request alone, so retries, restarts and side requests never
// put the script out of step.

/** A call of one of the agent's own tools. */
export interface ScriptedToolCall {
  /** The tool's name as the agent declared it. */
  name: string;
  /** Its arguments: an object sent as JSON, or raw input for a freeform (custom) tool of the Responses API. */
  arguments: Record<string, unknown> | string;
}

/** One answer of the model. */
export interface ModelTurn {
  /** Text streamed in these chunks, in order (one server-sent event each). */
  text?: string[];
  /** A tool call after the text: the turn stops for its result. */
  toolCall?: ScriptedToolCall;
  /** Streams the text, then keeps the answer open until the agent hangs up: a turn to cancel. */
  hold?: boolean;
  /**
   * The first streamed answer to this turn stops after this many text chunks
   * and its connection is closed, as a network cuts a stream; the answers
   * after it (the agent asking again) are whole.
   */
  cutAfter?: number;
}

export interface Script {
  /** A phrase of the user's prompt that selects this script. */
  trigger: string;
  turns: ModelTurn[];
}

/** What the model's side of a conversation holds, read from one request of any of the three APIs. */
export type ConversationEntry =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "tool_call"; name: string; input: string }
  | { kind: "tool_result"; text: string };

/** The answer to a turn past the script's end: the turn is over. */
export const SCRIPT_END: ModelTurn = { text: ["Done."] };

/**
 * The script and turn a request asks for: the last user entry that carries a
 * trigger starts the prompt; the tool results after it say how far it got.
 */
export function pickTurn(scripts: readonly Script[], entries: readonly ConversationEntry[]): { script: Script; turn: number } | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind !== "user") continue;
    // The latest script whose trigger the entry carries: a later script may reuse an earlier prompt's words.
    const script = [...scripts].reverse().find((s) => entry.text.includes(s.trigger));
    if (script === undefined) continue;
    const turn = entries.slice(i + 1).filter((e) => e.kind === "tool_result").length;
    return { script, turn };
  }
  return undefined;
}

/** Text split into chunks of `size` characters, as a model streams it. */
export function chunks(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Any value's text, for reading tool results and message parts of every shape. */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(textOf).join("\n");
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record["text"] === "string") return record["text"];
    if ("content" in record) return textOf(record["content"]);
    if ("output" in record) return textOf(record["output"]);
    return JSON.stringify(value);
  }
  return value === undefined || value === null ? "" : String(value);
}
