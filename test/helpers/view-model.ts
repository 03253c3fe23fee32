// What the session view (web/session-view) shows of a history, as plain data:
// the transcript's blocks in order (messages, tool call cards, turn ends,
// errors, settled permission cards, notices), the final state of each tool
// call, the plan shown at each turn's end and at the end, the marks in order,
// and what the header and composer show. It follows the view's rules line by
// line (session-view.ts `apply`, transcript.ts, tool-calls.ts `apply`), so two
// histories that give the same model draw the same page; test/web checks the
// same on the real view in a browser.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { type HistoryMark, readMark, toolCallInterruption } from "../../protocol/history.ts";
import { contentText } from "../../web/session-view/content.ts";

export interface MessageBlock {
  block: "message";
  who: "user" | "agent" | "thought";
  messageId: string | undefined;
  text: string;
}

export interface ToolCard {
  block: "tool";
  id: string;
  title: string;
  kind: string;
  status: string;
  locations: unknown;
  content: unknown;
}

export type Block =
  | MessageBlock
  | ToolCard
  | { block: "turn-end"; stopReason: string }
  | { block: "error"; message: string }
  | { block: "permission"; mark: unknown }
  | { block: "notice"; text: string; severity: string };

export interface ViewModel {
  blocks: Block[];
  /** The plan shown (`plan` entries), when one came. */
  plan: unknown;
  /** The plan shown when each turn ended, in order. */
  plansAtTurnEnds: unknown[];
  marks: HistoryMark[];
  title: string | undefined;
  commands: unknown;
  modeId: unknown;
  configOptions: unknown;
}

const WHO = { user_message_chunk: "user", agent_message_chunk: "agent", agent_thought_chunk: "thought" } as const;

/** The model of what the session view shows after it was fed `history`, in order. */
export function drawHistory(history: readonly SessionUpdate[]): ViewModel {
  const model: ViewModel = { blocks: [], plan: undefined, plansAtTurnEnds: [], marks: [], title: undefined, commands: undefined, modeId: undefined, configOptions: undefined };
  const cards = new Map<string, ToolCard>();
  let current: MessageBlock | undefined;
  let firstTitle: string | undefined;
  const add = (block: Block): void => {
    if (block.block !== "message") current = undefined;
    model.blocks.push(block);
  };
  for (const u of history) {
    const mark = readMark(u);
    // A request asked draws nothing (the mark that settles it does).
    if (mark !== undefined && "permissionAsked" in mark) continue;
    if (mark !== undefined) {
      model.marks.push(mark);
      if ("turnEnd" in mark) {
        const end = mark.turnEnd;
        if ("stopReason" in end) {
          current = undefined;
          add({ block: "turn-end", stopReason: end.stopReason });
        } else {
          add({ block: "error", message: end.error });
        }
        model.plansAtTurnEnds.push(model.plan);
      } else {
        add({ block: "permission", mark: mark.permission });
      }
      continue;
    }
    switch (u.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const who = WHO[u.sessionUpdate];
        const messageId = u.messageId ?? undefined;
        if (!current || current.who !== who || (messageId !== undefined && current.messageId !== messageId)) {
          current = { block: "message", who, messageId, text: "" };
          add(current);
        }
        current.text += contentText(u.content);
        break;
      }
      case "tool_call":
      case "tool_call_update": {
        let card = cards.get(u.toolCallId);
        if (!card) {
          card = { block: "tool", id: u.toolCallId, title: "Tool call", kind: "other", status: "pending", locations: undefined, content: undefined };
          cards.set(u.toolCallId, card);
          add(card);
        }
        if (u.title != null) card.title = u.title;
        if (u.kind != null) card.kind = u.kind;
        if (u.status != null) card.status = toolCallInterruption(u) === undefined ? u.status : "interrupted";
        if (u.locations != null) card.locations = u.locations;
        if (u.content != null) card.content = u.content;
        break;
      }
      case "plan":
        model.plan = u.entries;
        break;
      case "available_commands_update":
        model.commands = u.availableCommands;
        break;
      case "current_mode_update":
        model.modeId = u.currentModeId;
        break;
      case "config_option_update":
        model.configOptions = u.configOptions;
        break;
      case "session_info_update":
        if (u.title) {
          firstTitle ??= u.title;
          model.title = u.title;
        } else if (u.title === null) {
          // A title the agent clears gives way to the first one the session had.
          model.title = firstTitle;
        }
        break;
      case "notice":
        add({ block: "notice", text: u.description ? `${u.title}: ${u.description}` : u.title, severity: u.severity });
        break;
      default:
        break;
    }
  }
  // Copies, so that a later change of a card cannot reach a model already taken.
  return structuredClone(model);
}

/** The final state of each tool call, by id. */
export function toolStates(model: ViewModel): Map<string, ToolCard> {
  return new Map(model.blocks.filter((b): b is ToolCard => b.block === "tool").map((b) => [b.id, b]));
}
