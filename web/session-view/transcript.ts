// The transcript: messages, tool calls, permission requests, turn ends and
// errors in order, in a role=log element. Consecutive chunks of one kind (and
// one messageId, when the agent sends ids) merge into one message; anything
// else in between starts a new one.
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { contentText } from "./content.ts";
import { el } from "./dom.ts";
import { copyButtons } from "./markdown.ts";
import { MessageBlock, type MessageKind } from "./messages.ts";
import type { CardActions } from "./editor-links.ts";
import type { PermissionCard } from "./permissions.ts";
import type { FrameScheduler } from "./scheduler.ts";
import { type DiffContent, ToolCallCard } from "./tool-calls.ts";

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
  /** The latest permission request about each tool call: it shows the call's diffs, next to its answers. */
  private readonly permissionOf = new Map<string, PermissionCard>();
  private readonly stopCopy: () => void;

  private readonly scheduler: FrameScheduler;
  private readonly actions: CardActions;

  constructor(scheduler: FrameScheduler, actions: CardActions = {}) {
    this.scheduler = scheduler;
    this.actions = actions;
    // The log a screen reader follows; its scroller (follow.ts) is what the keyboard scrolls.
    this.element = el("div", { class: "sv-transcript", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
    this.stopCopy = copyButtons(this.element);
  }

  /**
   * Draws an update that is the transcript's (a message chunk, a tool call, a
   * notice) as a live turn and a replay both draw it, and says whether it was
   * one. Each asks for a frame: a message's text is rendered in one, and a
   * tool call or a notice changed the transcript's height now.
   */
  draw(u: SessionUpdate): boolean {
    switch (u.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk":
        this.chunk(u);
        return true;
      case "tool_call":
      case "tool_call_update":
        this.toolCall(u);
        break;
      case "notice":
        this.notice(u.description ? `${u.title}: ${u.description}` : u.title, u.severity);
        break;
      default:
        return false;
    }
    this.scheduler.touch();
    return true;
  }

  private chunk(update: Chunk): void {
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

  private toolCall(update: ToolNotice): void {
    let card = this.toolCalls.get(update.toolCallId);
    if (!card) {
      const id = update.toolCallId;
      card = new ToolCallCard(id, this.actions);
      card.onDiffs = (diffs) => this.linkDiffs(id, diffs);
      this.toolCalls.set(id, card);
      this.add(card.element);
      // A request that came before its tool call's first update.
      const permission = this.permissionOf.get(id);
      if (permission) {
        card.deferDiffs({ element: permission.element, paths: permission.diffPaths });
        if (permission.verdict !== undefined) card.setVerdict(permission.verdict);
      }
    }
    card.apply(update);
  }

  /**
   * A permission request's card (open, or settled in a replay): it shows the
   * diffs its tool call's card has, which points there instead, and a change
   * it rejected is marked so on that card.
   */
  permission(card: PermissionCard): void {
    const id = card.toolCallId;
    this.permissionOf.set(id, card);
    const tool = this.toolCalls.get(id);
    card.onVerdict = (verdict) => this.toolCalls.get(id)?.setVerdict(verdict);
    if (tool) {
      this.linkDiffs(id, tool.diffs);
      // A replayed card comes settled.
      if (card.verdict !== undefined) tool.setVerdict(card.verdict);
    }
    this.add(card.element);
  }

  /** The tool call's diffs go to its permission request's card, when there is one. */
  private linkDiffs(toolCallId: string, diffs: DiffContent[]): void {
    const permission = this.permissionOf.get(toolCallId);
    if (!permission) return;
    permission.borrowDiffs(diffs);
    this.toolCalls.get(toolCallId)?.deferDiffs({ element: permission.element, paths: permission.diffPaths });
  }

  turnEnded(stopReason: StopReason): void {
    this.add(el("div", { class: "sv-turn-end", "data-stop-reason": stopReason }, STOP_LABELS[stopReason] ?? `Stopped: ${stopReason}`));
  }

  private notice(text: string, severity: string): void {
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
