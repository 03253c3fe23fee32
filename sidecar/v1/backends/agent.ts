// Every configured workspace agent is a model (design: Deferred completions,
// decision 4). A completion is one prompt turn on a fresh session of the
// agent (`OneShotRunner.runPrompt`): `agent_message_chunk` text becomes
// `content`, `agent_thought_chunk` text becomes `reasoning_content`, and the
// stop reason becomes `finish_reason`.
import type { ContentBlock, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type { OneShotPermissionPolicy, OneShotResult, OneShotRunner } from "../../hub/types.ts";
import type { ChatMessage, ChatRequest, FinishReason, ModelInfo, Usage } from "../../../protocol/v1.ts";
import { AGENT_OWNER, ObjectType } from "../../../protocol/v1.ts";
import type { Backend, CompletionRun } from "./types.ts";
import { backendFailed } from "../errors.ts";
import { chunkBody, completionBody, fingerprint, unixSeconds, usageChunk } from "../completion.ts";
import { countedUsage, makeUsage } from "../usage.ts";

/** ACP stop reason → OpenAI `finish_reason`. */
export const FINISH_REASON: Readonly<Record<StopReason, FinishReason>> = {
  end_turn: "stop",
  max_tokens: "length",
  max_turn_requests: "length",
  refusal: "content_filter",
  cancelled: "stop",
};

/** Concurrency key of an agent: each agent process is its own backend. */
function agentBackendKey(agent: string): string {
  return `agent:${agent}`;
}

/**
 * The prompt of a one-shot turn, as text blocks in this order: the system and
 * developer messages as they are (instructions), the earlier turns of the
 * conversation as one labelled transcript, and the last message as it is, so
 * the agent answers that one with the rest as context. A lone user message is
 * exactly the prompt.
 */
export function promptFromMessages(messages: readonly ChatMessage[]): ContentBlock[] {
  const instructions = messages.filter((m) => m.role === "system" || m.role === "developer");
  const turns = messages.filter((m) => m.role !== "system" && m.role !== "developer");
  const last = turns.pop();
  const blocks: ContentBlock[] = instructions.map((m) => ({ type: "text", text: m.content }));
  if (turns.length > 0) {
    const transcript = turns.map((m) => `[${m.role}${m.name ? ` ${m.name}` : ""}]\n${m.content}`).join("\n\n");
    blocks.push({ type: "text", text: `Conversation so far:\n\n${transcript}` });
  }
  if (last) blocks.push({ type: "text", text: last.role === "user" ? last.content : `[${last.role}]\n${last.content}` });
  return blocks;
}

function chunkText(update: SessionUpdate): string | undefined {
  if (update.sessionUpdate !== "agent_message_chunk" && update.sessionUpdate !== "agent_thought_chunk") return undefined;
  return update.content.type === "text" ? update.content.text : undefined;
}

async function agentUsage(messages: readonly ChatMessage[], content: string, reasoning: string, reported: OneShotResult["usage"]): Promise<Usage> {
  if (reported?.inputTokens === undefined || reported.outputTokens === undefined) return countedUsage(messages, content, reasoning);
  const reasoningTokens = reported.thoughtTokens ?? 0;
  // ACP's outputTokens already holds all output; makeUsage adds reasoning on top, so take it out first.
  return makeUsage({
    prompt: reported.inputTokens,
    completion: Math.max(0, reported.outputTokens - reasoningTokens),
    reasoning: reasoningTokens,
    cached: reported.cachedReadTokens ?? 0,
  });
}

export interface AgentBackendOptions {
  runner: OneShotRunner;
  /** Who answers a permission request during a completion; the hub's default when absent. */
  permissions?: OneShotPermissionPolicy;
  /** Working folder of the server's own person's one-shot sessions; the sidecar's default when absent. */
  cwd?: string;
  clock?: () => number;
}

export function createAgentBackend(options: AgentBackendOptions): Backend {
  const { runner } = options;
  const since = unixSeconds((options.clock ?? Date.now)());
  return {
    async models(): Promise<ModelInfo[]> {
      return runner.agentNames().map((id) => ({ id, object: ObjectType.model, created: since, owned_by: AGENT_OWNER }));
    },
    async resolve(model) {
      return runner.agentNames().includes(model) ? agentBackendKey(model) : undefined;
    },
    async complete(request: ChatRequest, run: CompletionRun) {
      const base = { id: run.id, created: run.created, model: request.model, fingerprint: fingerprint(agentBackendKey(request.model)) };
      let content = "";
      let reasoning = "";
      if (run.onChunk) run.onChunk(chunkBody(base, { role: "assistant", content: "" }));
      const onUpdate = (update: SessionUpdate): void => {
        const text = chunkText(update);
        if (text === undefined || text.length === 0) return;
        if (update.sessionUpdate === "agent_message_chunk") {
          content += text;
          run.onChunk?.(chunkBody(base, { content: text }));
        } else {
          reasoning += text;
          run.onChunk?.(chunkBody(base, { reasoning_content: text }));
        }
      };
      let result: OneShotResult;
      if (run.signal.aborted) throw run.signal.reason;
      try {
        result = await runner.runPrompt(request.model, promptFromMessages(request.messages), {
          signal: run.signal,
          owner: run.owner,
          onUpdate,
          ...(run.requestId === undefined ? {} : { requestId: run.requestId }),
          ...(options.permissions ? { permissions: options.permissions } : {}),
          ...(options.cwd ? { cwd: options.cwd } : {}),
        });
      } catch (error) {
        if (run.signal.aborted) throw run.signal.reason;
        throw backendFailed(`The agent "${request.model}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      // The turn may end normally after the client left (the agent finished before the cancel): nobody wants
      // the result, and counting a long output's tokens would be work for nothing.
      if (run.signal.aborted) throw run.signal.reason;
      const finishReason = FINISH_REASON[result.stopReason] ?? "stop";
      const usage = await agentUsage(request.messages, content, reasoning, result.usage);
      if (run.onChunk) {
        run.onChunk(chunkBody(base, {}, finishReason));
        if (request.includeUsage) run.onChunk(usageChunk(base, usage));
      }
      return completionBody({ ...base, content, reasoning, finishReason, usage });
    },
  };
}
