// Random session histories, as the journal holds them, from a seed: turns of a
// prompt (user chunks of its own message id), then agent and thought chunks of
// 0–20 characters (message ids kept, changed, null or absent), tool calls and
// their updates (status, title, kind, content with text, diffs and terminals,
// locations, raw input and output, `_meta`; fields set, null or absent; some
// for ids of an earlier turn or never announced), plans, mode, commands,
// title and usage updates, notices, images, settled permission marks, and
// each turn's end mark (a stop reason or an error); the last turn may still run.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { markUpdate } from "../../protocol/history.ts";
import type { Random } from "./seeded-random.ts";

const WORDS = ["the ", "parser ", "reads ", "**one** ", "token", "\n\n", "`x` ", "- item\n", "ok", "é", "🙂", "# Head\n", "```\ncode\n```\n"];
const STATUSES = ["pending", "in_progress", "completed", "failed"] as const;
const KINDS = ["read", "edit", "execute", "search", "other"] as const;
const PLAN_STATUSES = ["pending", "in_progress", "completed"] as const;
const STOP_REASONS = ["end_turn", "cancelled", "max_tokens", "refusal"] as const;

export interface HistoryShape {
  turns: number;
  /** Updates of each turn after its prompt, at most. */
  steps: number;
  /** Whether the last turn may be left running (no end mark). */
  openEnd?: boolean;
}

export function randomHistory(random: Random, shape: HistoryShape): SessionUpdate[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const chance = (p: number): boolean => random() < p;
  const text = (max = 20): string => {
    let out = "";
    const length = Math.floor(random() * (max + 1));
    while (out.length < length) out += pick(WORDS);
    return out.slice(0, length);
  };
  /** A field's value: mostly set, sometimes null or absent. */
  const maybe = <T>(make: () => T): T | null | undefined => {
    const r = random();
    return r < 0.6 ? make() : r < 0.8 ? null : undefined;
  };
  const withFields = (base: Record<string, unknown>, fields: Record<string, unknown>): SessionUpdate => {
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) base[key] = value;
    return base as unknown as SessionUpdate;
  };
  const toolContent = (): unknown[] =>
    Array.from({ length: Math.floor(random() * 3) }, () => {
      const r = random();
      if (r < 0.4) return { type: "content", content: { type: "text", text: text(40) } };
      if (r < 0.8) return { type: "diff", path: `src/${pick(["a", "b"])}.ts`, oldText: chance(0.2) ? null : text(30), newText: text(30) };
      return { type: "terminal", terminalId: `term-${Math.floor(random() * 3)}` };
    });
  const locations = (): unknown[] => Array.from({ length: Math.floor(random() * 3) }, () => (chance(0.5) ? { path: `src/${text(4)}.ts` } : { path: "src/a.ts", line: Math.floor(random() * 90) }));
  const planEntries = (): unknown[] =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => ({ content: `Step ${i + 1} ${text(8)}`, priority: "medium", status: pick(PLAN_STATUSES) }));

  const history: SessionUpdate[] = [];
  const earlierTools: string[] = [];
  let tools = 0;
  for (let turn = 0; turn < shape.turns; turn++) {
    const promptId = `prompt-${turn}`;
    for (let i = 0, n = 1 + Math.floor(random() * 2); i < n; i++) {
      history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: text() }, messageId: promptId });
    }
    const turnTools: string[] = [];
    let agentMessage = `agent-${turn}-0`;
    const steps = Math.floor(random() * (shape.steps + 1));
    for (let step = 0; step < steps; step++) {
      const r = random();
      if (r < 0.4) {
        // Mostly runs of one message; now and then another message, or no id at all.
        if (chance(0.05)) agentMessage = `agent-${turn}-${step}`;
        const idChoice = random();
        const messageId = idChoice < 0.85 ? agentMessage : idChoice < 0.92 ? null : undefined;
        const kind = chance(0.8) ? "agent_message_chunk" : "agent_thought_chunk";
        const content = chance(0.02) ? { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" } : { type: "text", text: text() };
        history.push(withFields({ sessionUpdate: kind, content }, { messageId }));
      } else if (r < 0.5) {
        const toolCallId = chance(0.9) || earlierTools.length === 0 ? `tool-${++tools}` : pick(earlierTools);
        turnTools.push(toolCallId);
        history.push(
          withFields(
            { sessionUpdate: "tool_call", toolCallId, title: `Tool ${text(10)}` },
            { kind: maybe(() => pick(KINDS)), status: maybe(() => pick(STATUSES)), content: maybe(toolContent), locations: maybe(locations), rawInput: maybe(() => ({ q: text(5) })) },
          ),
        );
      } else if (r < 0.72) {
        const known = turnTools.length > 0 && chance(0.85);
        const toolCallId = known ? pick(turnTools) : chance(0.5) && earlierTools.length > 0 ? pick(earlierTools) : `tool-${++tools}`;
        if (!known) turnTools.push(toolCallId);
        history.push(
          withFields(
            { sessionUpdate: "tool_call_update", toolCallId },
            {
              status: maybe(() => pick(STATUSES)),
              title: chance(0.2) ? maybe(() => `Tool ${text(10)}`) : undefined,
              kind: chance(0.1) ? maybe(() => pick(KINDS)) : undefined,
              content: chance(0.5) ? maybe(toolContent) : undefined,
              locations: chance(0.3) ? maybe(locations) : undefined,
              rawOutput: chance(0.2) ? maybe(() => ({ out: text(10) })) : undefined,
              _meta: chance(0.1) ? { vendor: { step } } : undefined,
            },
          ),
        );
      } else if (r < 0.82) {
        history.push({ sessionUpdate: "plan", entries: planEntries() } as SessionUpdate);
      } else if (r < 0.86) {
        history.push(
          markUpdate({
            permission: {
              toolCall: { toolCallId: `tool-${++tools}`, title: `Edit ${text(6)}`, kind: "edit" },
              options: [
                { optionId: "allow", name: "Allow", kind: "allow_once" },
                { optionId: "reject", name: "Reject", kind: "reject_once" },
              ],
              outcome: chance(0.7) ? { outcome: "selected", optionId: pick(["allow", "reject"]) } : { outcome: "cancelled" },
              settledBy: pick(["client", "editor", "notification", "agent", "timeout", "cancel"] as const),
            },
          }),
        );
      } else if (r < 0.88) {
        history.push({ sessionUpdate: "notice", severity: pick(["info", "warning", "error"] as const), title: text(10), ...(chance(0.5) ? { description: text(10) } : {}) } as SessionUpdate);
      } else if (r < 0.9) {
        history.push({ sessionUpdate: "current_mode_update", currentModeId: pick(["ask", "code"]) });
      } else if (r < 0.92) {
        history.push({ sessionUpdate: "available_commands_update", availableCommands: [{ name: text(5) || "c", description: text(10) }] });
      } else if (r < 0.94) {
        history.push({ sessionUpdate: "session_info_update", title: chance(0.2) ? null : text(12) });
      } else if (r < 0.96) {
        history.push({ sessionUpdate: "usage_update", used: Math.floor(random() * 1000), size: 200_000 } as SessionUpdate);
      } else {
        // A chunk of the prompt's message again (another client's prompt of the same id), or a thought.
        history.push({ sessionUpdate: chance(0.5) ? "user_message_chunk" : "agent_thought_chunk", content: { type: "text", text: text() }, messageId: promptId });
      }
    }
    earlierTools.push(...turnTools);
    if (turn === shape.turns - 1 && shape.openEnd === true && chance(0.5)) break;
    history.push(markUpdate({ turnEnd: chance(0.85) ? { stopReason: pick(STOP_REASONS) } : { error: `failed: ${text(10)}` } }));
  }
  return history;
}
