// What the hub tells a person's notification channels (sidecar/notify/): a
// permission request opened or was settled, a turn ended with the first line
// of the agent's answer, an agent stopped for good, and when no page shows a
// session any more. Only stored sessions count (/v1's one-shot runs are
// nobody's to be told of). Which page shows a session is what its client
// connections say (`_acp-remote/visibility`), counted only while they follow it.
import type { SessionNotification } from "@agentclientprotocol/sdk";
import type { PermissionInfo, TurnEvent } from "../../protocol/control.ts";
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
  readonly #answers = new Map<string, string>();
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
    const answered = this.#answers.get(event.sessionId) ?? "";
    this.#answers.delete(event.sessionId);
    const session = this.#stored(event.sessionId);
    if (!session) return;
    if (event.state === "started") {
      this.#answers.set(session.id, "");
      return;
    }
    const answer = firstLine(answered);
    this.#emit({
      kind: "turn_ended",
      session: noticeSession(session),
      stopReason: event.stopReason ?? "error",
      ...(answer === "" ? {} : { answer }),
      ...(event.message === undefined ? {} : { error: event.message }),
    });
  }

  /** A live update: the agent's answer text is kept (bounded) until the first line of it is whole. */
  update(notification: SessionNotification): void {
    const sofar = this.#answers.get(notification.sessionId);
    const update = notification.update;
    if (sofar === undefined || update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
    // Enough once a line with text is whole, or the bound is reached.
    if (sofar.length >= DEFAULT_NOTICE_ANSWER_CHARS || /\S[^\n]*\n/.test(sofar)) return;
    this.#answers.set(notification.sessionId, (sofar + update.content.text).slice(0, DEFAULT_NOTICE_ANSWER_CHARS));
  }

  /** A client said whether it shows the session, or stopped following it: when none shows it now, the channels may speak. */
  visibilityChanged(session: HubSession): void {
    if (!this.shown(session.id) && this.#stored(session.id)) this.#emit({ kind: "hidden", session: noticeSession(session) });
  }

  // ---- HubNotices ----

  onNotice(listener: (notice: HubNotice) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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

/** The first line of the answer that has text, trimmed. */
function firstLine(text: string): string {
  return text.split("\n").map((line) => line.trim()).find((line) => line !== "") ?? "";
}
