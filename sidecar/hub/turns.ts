// A prompt turn on a stored session, whoever sends it (a client connection or
// the editor): the prompt is journaled and shown to every other follower as
// `user_message_chunk`s of one message (a `messageId` of its own, so that two
// prompts never read as one), the session counts as running until the agent
// answers, and the turn's start and end are told to the turn listeners. The
// end is journaled as a mark (protocol/history.ts): live clients learn it from
// the prompt's answer, a replay from the mark. A turn whose agent process dies
// under it ends as interrupted (interrupted-turns.ts): its open tool calls
// failed, for every follower, and the prompt's error says so. The first
// prompt names a session its agent has not named (session-titles.ts).
import { randomUUID } from "node:crypto";
import type { ContentBlock, PromptResponse, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { Acp } from "../../protocol/acp.ts";
import type { TurnEvent } from "../../protocol/control.ts";
import { type HistoryMark, interruptedToolCall } from "../../protocol/history.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { AgentGone } from "../bridge/agent-gone.ts";
import { listen } from "../../common/listeners.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import { interruptionMessage } from "./interrupted-turns.ts";
import { errorMessage } from "./messages.ts";
import { notifyClients } from "./session-clients.ts";
import { promptTitle } from "./session-titles.ts";
import type { HubSession, SessionOwner } from "./session.ts";

export interface TurnsOptions {
  agents: AgentSessions;
  record: (session: HubSession, update: SessionUpdate) => void;
  /** Journals a mark of the session's history, for replays only (live clients learn it otherwise). */
  mark: (session: HubSession, mark: HistoryMark) => void;
  /** Writes what was journaled so far, where a turn's answer must leave after its updates are in the store. */
  written: () => Promise<void>;
  changed: () => void;
}

export class Turns {
  readonly #options: TurnsOptions;
  readonly #listeners = new Set<(event: TurnEvent) => void>();

  constructor(options: TurnsOptions) {
    this.#options = options;
  }

  onTurn(listener: (event: TurnEvent) => void): () => void {
    return listen(this.#listeners, listener);
  }

  /**
   * Runs `session/prompt` with `params` (the client's own params, the session
   * id replaced by the agent's). `origin` is the client that sent it, which
   * already shows its prompt; undefined for the editor.
   */
  async run(session: HubSession, params: Record<string, unknown>, origin: SessionOwner | undefined, signal?: AbortSignal): Promise<PromptResponse> {
    const agents = this.#options.agents;
    const agentSessionId = agents.agentIdNow(session) ?? (await agents.ensure(session));
    // The agent is asked first and works on the prompt while the turn is
    // journaled, told to the other followers and the POST answered: it is
    // written in this turn of the event loop (common/ndjson.ts), and nothing
    // it answers is read before all of this is done.
    const answer = agents.of(session).process.request(Acp.agent.session.prompt, { ...params, sessionId: agentSessionId }, signal);
    // Awaited below: this keeps its failure handled should a step in between throw first.
    answer.catch(() => undefined);
    const prompt: ContentBlock[] = Array.isArray(params["prompt"]) ? (params["prompt"] as ContentBlock[]) : [];
    const messageId = randomUUID();
    session.openTurn.reset();
    for (const content of prompt) {
      const update: SessionUpdate = { sessionUpdate: "user_message_chunk", content, messageId };
      this.#options.record(session, update);
      notifyClients(session, Acp.client.session.update, { sessionId: session.id, update }, origin);
    }
    this.#nameAfter(session, prompt);
    session.running++;
    session.touch();
    this.#options.changed();
    this.#emit({ sessionId: session.id, state: "started" });
    let stopReason: StopReason | "error" = "error";
    let message: string | undefined;
    try {
      const response = (await answer) as PromptResponse;
      if (isRecord(response) && typeof response.stopReason === "string") stopReason = response.stopReason;
      if (stopReason !== "error") this.#options.mark(session, { turnEnd: { stopReason } });
      // A client that saw the turn end finds all of it in the journal, on any node, even if this one dies now.
      await this.#options.written().catch(() => undefined);
      return response;
    } catch (error) {
      if (!(error instanceof AgentGone)) {
        message = errorMessage(error);
        this.#options.mark(session, { turnEnd: { error: message } });
        throw error;
      }
      // The agent will never end what it left open: the server does, the same
      // for every follower and the journal. (Its permission requests were
      // withdrawn as it died, with its requests.)
      const interrupted = error.stopped ? "server-stopped" : "agent-exited";
      message = interruptionMessage(interrupted, error.stopped ? undefined : error.message);
      for (const toolCallId of session.openTurn.openToolCalls()) {
        const update = interruptedToolCall(toolCallId, interrupted);
        this.#options.record(session, update);
        notifyClients(session, Acp.client.session.update, { sessionId: session.id, update });
      }
      this.#options.mark(session, { turnEnd: { error: message, interrupted } });
      throw new RpcFailure(ErrorCode.InternalError, message);
    } finally {
      session.running--;
      session.touch();
      this.#options.changed();
      this.#emit({ sessionId: session.id, state: "ended", stopReason, ...(message === undefined ? {} : { message }) });
    }
  }

  /**
   * The session's first prompt gives it a title, kept for as long as the
   * agent gives none; told to every follower, the sender too (it shows its
   * own prompt, not the title made of it).
   */
  #nameAfter(session: HubSession, prompt: readonly ContentBlock[]): void {
    if (session.record.promptTitle !== undefined) return;
    const title = promptTitle(prompt);
    if (title === undefined) return;
    session.record.promptTitle = title;
    if (session.record.title !== undefined) return;
    const update: SessionUpdate = { sessionUpdate: "session_info_update", title };
    this.#options.record(session, update);
    notifyClients(session, Acp.client.session.update, { sessionId: session.id, update });
  }

  #emit(event: TurnEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
