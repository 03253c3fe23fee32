// What the editor knows about each tool call, from the session updates it
// receives. An agent's permission request often carries only the tool call's
// id (ACP lets it send a partial ToolCallUpdate); the panel shows the whole
// call (title, kind, diff, command) by laying the request over what is known.
import type { SessionNotification, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { DEFAULT_EDITOR_KNOWN_TOOL_CALLS } from "../limits.ts";

function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

export class ToolCallIndex {
  /** Insertion-ordered: the oldest entry goes first when the bound is reached. */
  readonly #calls = new Map<string, ToolCallUpdate>();

  #key(sessionId: string, toolCallId: string): string {
    return `${sessionId}\u0000${toolCallId}`;
  }

  observe(n: SessionNotification): void {
    const u = n.update;
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") return;
    const key = this.#key(n.sessionId, u.toolCallId);
    const { sessionUpdate: _kind, ...fields } = u;
    const known = this.#calls.get(key);
    this.#calls.delete(key);
    this.#calls.set(key, { ...known, ...defined(fields), toolCallId: u.toolCallId });
    if (this.#calls.size > DEFAULT_EDITOR_KNOWN_TOOL_CALLS) this.#calls.delete(this.#calls.keys().next().value!);
  }

  /** The request's tool call over what the session updates said about it. */
  complete(sessionId: string, toolCall: ToolCallUpdate): ToolCallUpdate {
    const known = this.#calls.get(this.#key(sessionId, toolCall.toolCallId));
    return known ? { ...known, ...defined(toolCall), toolCallId: toolCall.toolCallId } : toolCall;
  }

  clear(): void {
    this.#calls.clear();
  }
}
