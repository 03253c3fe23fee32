// What the hub tells a person's notification channels (sidecar/notify/): a
// permission request opened or was settled, a turn ended with the first line
// of the agent's answer, an agent stopped for good, and when no page shows a
// session any more. Only stored sessions count (/v1's one-shot runs are
// nobody's to be told of). Which page shows a session is what its client
// connections say (`_acp-remote/visibility`), counted only while they follow it.
import type { SessionNotification } from "@agentclientprotocol/sdk";
import type { PermissionInfo, TurnEvent } from "../../protocol/control.ts";
import { listen } from "../../common/listeners.ts";
import { DEFAULT_NOTICE_ANSWER_CHARS } from "../limits.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import type { PermissionBroker } from "./permissions.ts";
import type { HubSession } from "./session.ts";
import type { DevicePush, HubNotice, HubNotices, NoticeSession } from "./types.ts";

export interface SessionNoticesDeps {
  /** The stored session of that public id on this node, if any. */
  session(sessionId: string): HubSession | undefined;
  permissions: PermissionBroker;
  agents: AgentSessions;
}

export class SessionNotices implements HubNotices {
  readonly #deps: SessionNoticesDeps;
  readonly #listeners = new Set<(notice: HubNotice) => void>();
  /** Sessions whose turn runs, with the start of the agent's answer so far. */
  readonly #answers = new Map<string, AnswerStart>();
  #push: DevicePush | undefined;

  constructor(deps: SessionNoticesDeps) {
    this.#deps = deps;
    for (const agent of deps.agents.entries()) {
      agent.process.onStateChange((state) => {
        // Failed: it gave up restarting. A crash it restarts from ends the turn it was in, told as that turn's error.
        if (state === "failed") this.#emit({ kind: "agent_failed", agent: agent.spec.name, message: agent.process.info().lastError ?? `agent ${agent.spec.name} stopped` });
      });
    }
  }

  /** The Web Push subscriptions, while the server sends Web Push. */
  get push(): DevicePush | undefined {
    return this.#push;
  }

  // ---- What the hub tells ----

  permissionOpened(info: PermissionInfo): void {
    const session = this.#stored(info.sessionId);
    if (session && this.#deps.permissions.notifies(info.permissionId)) this.#emit({ kind: "permission", session: noticeSession(session), permission: info });
  }

  /** Told even when the session has just ended: what was offered for the request dies with it. */
  permissionSettled(info: PermissionInfo): void {
    this.#emit({ kind: "permission_settled", sessionId: info.sessionId, permissionId: info.permissionId });
  }

  turn(event: TurnEvent): void {
    const answered = this.#answers.get(event.sessionId)?.text ?? "";
    this.#answers.delete(event.sessionId);
    const session = this.#stored(event.sessionId);
    if (!session) return;
    if (event.state === "started") {
      this.#answers.set(session.id, { text: "", lineHasText: false, done: false });
      return;
    }
    const answer = firstLine(answered);
    const notice: HubNotice = {
      kind: "turn_ended",
      session: noticeSession(session),
      stopReason: event.stopReason ?? "error",
      ...(answer === "" ? {} : { answer }),
      ...(event.message === undefined ? {} : { error: event.message }),
    };
    // Told once the turn's answer is on its way: what the channels do with it
    // (the devices' subscriptions read from the store, the payloads) is not
    // part of the answer's round trip.
    setImmediate(() => this.#emit(notice));
  }

  /**
   * A live update: the agent's answer text is kept (bounded) until the first
   * line of it is whole. Only the new text is looked at: an answer streamed a
   * character at a time costs as much as one sent whole.
   */
  update(notification: SessionNotification): void {
    const sofar = this.#answers.get(notification.sessionId);
    const update = notification.update;
    if (sofar === undefined || sofar.done || update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
    const added = update.content.text.slice(0, DEFAULT_NOTICE_ANSWER_CHARS - sofar.text.length);
    sofar.text += added;
    // Enough once a line with text is whole, or the bound is reached.
    sofar.done = sofar.text.length >= DEFAULT_NOTICE_ANSWER_CHARS || endsLineWithText(sofar, added);
  }

  /** A client said whether it shows the session, or stopped following it: when none shows it now, the channels may speak. */
  visibilityChanged(session: HubSession): void {
    if (!this.shown(session.id) && this.#stored(session.id)) this.#emit({ kind: "hidden", session: noticeSession(session) });
  }

  // ---- HubNotices ----

  onNotice(listener: (notice: HubNotice) => void): () => void {
    return listen(this.#listeners, listener);
  }

  shown(sessionId: string): boolean {
    const session = this.#deps.session(sessionId);
    if (!session) return false;
    for (const client of session.clients) if (client.shows?.(sessionId) === true) return true;
    return false;
  }

  pending(sessionId: string): PermissionInfo[] {
    return this.#deps.permissions
      .list()
      .filter((p) => p.sessionId === sessionId && this.#deps.permissions.notifies(p.permissionId))
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  answerable(permissionId: string): boolean {
    return this.#deps.permissions.notifies(permissionId);
  }

  answer(permissionId: string, optionId: string): boolean {
    return this.#deps.permissions.answerFromNotification(permissionId, optionId);
  }

  setDevicePush(push: DevicePush | undefined): void {
    this.#push = push;
  }

  #stored(sessionId: string): HubSession | undefined {
    const session = this.#deps.session(sessionId);
    return session && !session.ephemeral ? session : undefined;
  }

  #emit(notice: HubNotice): void {
    for (const listener of this.#listeners) listener(notice);
  }
}

function noticeSession(session: HubSession): NoticeSession {
  return {
    sessionId: session.id,
    agent: session.record.agent,
    ownerId: session.record.ownerId,
    ...(session.record.title === undefined ? {} : { title: session.record.title }),
  };
}

/** The start of a turn's answer, and how far its first line with text got. */
interface AnswerStart {
  text: string;
  /** The line not yet ended has text other than white space. */
  lineHasText: boolean;
  /** A line with text is whole, or the text is at its bound: nothing more is kept. */
  done: boolean;
}

/** Follows `added`, appended to `answer`, line by line: whether it ends a line that has text. */
function endsLineWithText(answer: AnswerStart, added: string): boolean {
  let from = 0;
  for (let end = added.indexOf("\n"); end !== -1; end = added.indexOf("\n", from)) {
    if (answer.lineHasText || /\S/.test(added.slice(from, end))) return true;
    from = end + 1;
  }
  if (!answer.lineHasText && /\S/.test(added.slice(from))) answer.lineHasText = true;
  return false;
}

/** The first line of the answer that has text, trimmed. */
function firstLine(text: string): string {
  return text.split("\n").map((line) => line.trim()).find((line) => line !== "") ?? "";
}
