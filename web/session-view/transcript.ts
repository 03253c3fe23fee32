// The transcript: messages, tool calls, permission requests, turn ends and
// errors in order, in a role=log element. Consecutive chunks of one kind (and
// one messageId, when the agent sends ids) merge into one message; anything
// else in between starts a new one.
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { contentText } from "./content.ts";
import { el } from "./dom.ts";
import { copyButtons } from "./markdown.ts";
import { MessageBlock, type MessageKind } from "./messages.ts";
import type { FrameScheduler } from "./scheduler.ts";
import { ToolCallCard } from "./tool-calls.ts";

type Chunk = Extract<SessionUpdate, { sessionUpdate: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk" }>;
type ToolNotice = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

const CHUNK_KIND: Record<Chunk["sessionUpdate"], MessageKind> = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
};

const STOP_LABELS: Record<StopReason, string> = {
  end_turn: "Turn ended",
  max_tokens: "Stopped: token limit reached",
  max_turn_requests: "Stopped: request limit of the turn reached",
  refusal: "The agent refused",
  cancelled: "Cancelled",
};

export class Transcript {
  readonly element: HTMLElement;
  private current: MessageBlock | undefined;
  private readonly toolCalls = new Map<string, ToolCallCard>();
  private readonly stopCopy: () => void;

  private readonly scheduler: FrameScheduler;

  constructor(scheduler: FrameScheduler) {
    this.scheduler = scheduler;
    // The log a screen reader follows; its scroller (follow.ts) is what the keyboard scrolls.
    this.element = el("div", { class: "sv-transcript", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
    this.stopCopy = copyButtons(this.element);
  }

  chunk(update: Chunk): void {
    const kind = CHUNK_KIND[update.sessionUpdate];
    const messageId = update.messageId ?? undefined;
    const text = contentText(update.content);
    if (!this.current || this.current.kind !== kind || (messageId !== undefined && this.current.messageId !== messageId)) {
      this.current?.finish();
      this.current = new MessageBlock(kind, messageId, this.scheduler);
      this.add(this.current.element);
    }
    this.current.append(text);
  }

  toolCall(update: ToolNotice): void {
    let card = this.toolCalls.get(update.toolCallId);
    if (!card) {
      card = new ToolCallCard(update.toolCallId);
      this.toolCalls.set(update.toolCallId, card);
      this.add(card.element);
    }
    card.apply(update);
  }

  turnEnded(stopReason: StopReason): void {
    this.add(el("div", { class: "sv-turn-end", "data-stop-reason": stopReason }, STOP_LABELS[stopReason] ?? `Stopped: ${stopReason}`));
  }

  notice(text: string, severity: string): void {
    this.add(el("div", { class: `sv-notice sv-notice-${severity}`, role: severity === "error" ? "alert" : undefined }, text));
  }

  error(message: string): void {
    this.add(el("div", { class: "sv-error", role: "alert" }, message));
  }

  /** Appends a block and ends the message being streamed, keeping the reader at the bottom if they were there. */
  add(node: HTMLElement): void {
    if (!node.classList.contains("sv-msg")) {
      this.current?.finish();
      this.current = undefined;
    }
    this.element.append(node);
  }

  endStream(): void {
    this.current?.finish();
    this.current = undefined;
  }

  dispose(): void {
    this.stopCopy();
  }
}
