// What notifies whom, and when. The channels (paired devices' Web Push, the
// ntfy topic) all stand for the server's own person (devices are that
// person's; so is the ntfy topic of the server's configuration), so only that
// person's sessions notify. Three things do:
//   - a permission request waiting for an answer (title: the tool call's
//     title; body: its kind and locations), with the options the agent
//     offered to allow once and reject once as buttons;
//   - a turn that ended (its stop reason and the first line of the answer),
//     or that failed; a turn cancelled is not told (whoever cancelled knows);
//   - an agent that stopped for good.
// Nothing notifies while a page of the person shows the session and can be
// seen. One notification per session at a time: they share a tag (the newer
// replaces the older on the phone), and while a notified request waits, the
// session's next requests wait behind it; the next is told once that one is
// settled, or once no page shows the session any more.
import type { PermissionInfo } from "../../protocol/control.ts";
import { NoticeKind, type NotificationAction, type NotificationPayload } from "../../protocol/notify.ts";
import { INTERRUPTION_WORDS } from "../../protocol/history.ts";
import { sessionName } from "../../protocol/names.ts";
import type { HubNotice, HubNotices, NoticeSession } from "../hub/types.ts";
import { OWNER } from "../hub/types.ts";
import { DEFAULT_NOTICE_BODY_CHARS, DEFAULT_NOTICE_TITLE_CHARS } from "./limits.ts";

/**
 * A notification to send on every channel: the payload's fields that every
 * channel shares; a permission's capability is made per channel.
 */
export interface OutgoingNotice extends Pick<NotificationPayload, "kind" | "tag" | "title" | "body" | "url" | "sessionId"> {
  /** A permission request: the request and the buttons that answer it. */
  permission?: { permissionId: string; actions: NotificationAction[] };
}

export interface NoticePolicyDeps {
  hub: HubNotices;
  /** Sends on every channel. Never rejects. */
  deliver(notice: OutgoingNotice): Promise<void>;
  /** The request was settled: answers from its notifications are void. */
  settled(permissionId: string): void;
}

/** Why a turn ended, as a person reads it. */
const STOP_REASONS: Record<string, string> = {
  end_turn: "Finished",
  max_tokens: "Stopped at the token limit",
  max_turn_requests: "Stopped at the turn's request limit",
  refusal: "The agent refused",
};

export class NoticePolicy {
  readonly #deps: NoticePolicyDeps;
  /** Per session: the request its notification offers, while it waits, and the session as it was told. */
  readonly #outstanding = new Map<string, { permissionId: string; session: NoticeSession }>();
  readonly #unsubscribe: () => void;

  constructor(deps: NoticePolicyDeps) {
    this.#deps = deps;
    this.#unsubscribe = deps.hub.onNotice((notice) => this.#onNotice(notice));
  }

  close(): void {
    this.#unsubscribe();
  }

  #onNotice(notice: HubNotice): void {
    switch (notice.kind) {
      case "permission":
        if (this.#mayTell(notice.session) && !this.#waiting(notice.session.sessionId)) this.#tellPermission(notice.session, notice.permission);
        return;
      case "permission_settled": {
        this.#deps.settled(notice.permissionId);
        const outstanding = this.#outstanding.get(notice.sessionId);
        if (outstanding?.permissionId !== notice.permissionId) return;
        this.#outstanding.delete(notice.sessionId);
        // After the step that settled it: a cancelled turn settles all of its requests at once, and then none is next.
        setImmediate(() => {
          if (this.#mayTell(outstanding.session) && !this.#waiting(notice.sessionId)) this.#tellNext(outstanding.session);
        });
        return;
      }
      case "hidden":
        if (this.#mayTell(notice.session) && !this.#waiting(notice.session.sessionId)) this.#tellNext(notice.session);
        return;
      case "turn_ended":
        this.#outstanding.delete(notice.session.sessionId);
        if (this.#mayTell(notice.session) && notice.stopReason !== "cancelled") this.#tellTurn(notice);
        return;
      case "agent_failed":
        void this.#deps.deliver({
          kind: NoticeKind.Failed,
          tag: `agent:${notice.agent}`,
          title: clip(`Agent ${notice.agent} stopped`, DEFAULT_NOTICE_TITLE_CHARS),
          body: clip(notice.message, DEFAULT_NOTICE_BODY_CHARS),
          url: "#/",
        });
        return;
    }
  }

  /** The session is the channels' person's, and no page of theirs shows it. */
  #mayTell(session: NoticeSession): boolean {
    return session.ownerId === OWNER.id && !this.#deps.hub.shown(session.sessionId);
  }

  /** A notified request of the session still waits for its answer. */
  #waiting(sessionId: string): boolean {
    const outstanding = this.#outstanding.get(sessionId);
    if (outstanding === undefined) return false;
    if (this.#deps.hub.answerable(outstanding.permissionId)) return true;
    this.#outstanding.delete(sessionId);
    return false;
  }

  /** Tells the session's oldest waiting request, if one waits. */
  #tellNext(session: NoticeSession): void {
    const next = this.#deps.hub.pending(session.sessionId)[0];
    if (next !== undefined) this.#tellPermission(session, next);
  }

  #tellPermission(session: NoticeSession, permission: PermissionInfo): void {
    this.#outstanding.set(session.sessionId, { permissionId: permission.permissionId, session });
    const toolCall = permission.toolCall;
    const locations = (toolCall.locations ?? []).map((l) => (typeof l.line === "number" ? `${l.path}:${l.line}` : l.path));
    const what = [toolCall.kind ?? "other", locations.join(", ")].filter(Boolean).join(": ");
    const offered = permission.options;
    const actions = ["allow_once", "reject_once"]
      .map((kind) => offered.find((o) => o.kind === kind))
      .filter((o) => o !== undefined)
      .map((o): NotificationAction => ({ optionId: o.optionId, kind: o.kind, label: clip(o.name, DEFAULT_NOTICE_TITLE_CHARS) }));
    void this.#deps.deliver({
      kind: NoticeKind.Permission,
      tag: sessionTag(session.sessionId),
      title: clip(toolCall.title || "Permission requested", DEFAULT_NOTICE_TITLE_CHARS),
      body: clip(`${what}\n${sessionName(session)}`, DEFAULT_NOTICE_BODY_CHARS),
      url: sessionUrl(session),
      sessionId: session.sessionId,
      permission: { permissionId: permission.permissionId, actions },
    });
  }

  #tellTurn(notice: Extract<HubNotice, { kind: "turn_ended" }>): void {
    const failed = notice.stopReason === "error";
    const why = failed ? failure(notice.error) : (STOP_REASONS[notice.stopReason] ?? `Ended: ${notice.stopReason}`);
    void this.#deps.deliver({
      kind: failed ? NoticeKind.Failed : NoticeKind.TurnEnded,
      tag: sessionTag(notice.session.sessionId),
      title: clip(sessionName(notice.session), DEFAULT_NOTICE_TITLE_CHARS),
      body: clip(notice.answer === undefined || failed ? why : `${why}: ${notice.answer}`, DEFAULT_NOTICE_BODY_CHARS),
      url: sessionUrl(notice.session),
      sessionId: notice.session.sessionId,
    });
  }
}

function sessionTag(sessionId: string): string {
  return `session:${sessionId}`;
}

/** The web client's page of the session (web/client/app.ts routes). */
function sessionUrl(session: NoticeSession): string {
  return `#/s/${encodeURIComponent(session.agent)}/${encodeURIComponent(session.sessionId)}`;
}

/** At most `max` characters, an ellipsis marking the cut. */
function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** A failed turn in words: an interrupted one says so itself ("Turn interrupted: the agent exited (…)"). */
function failure(error: string | undefined): string {
  if (error === undefined) return "The agent failed";
  return Object.values(INTERRUPTION_WORDS).some((words) => error.startsWith(words)) ? error : `The agent failed: ${error}`;
}
