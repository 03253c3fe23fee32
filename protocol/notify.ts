// What a notification carries and how it is answered, shared by the server's
// senders (sidecar/notify/) and the web client's service worker
// (web/client/sw.ts). A notification that offers Allow and Reject carries a
// one-use capability for exactly that request and that device; the answer
// goes back with it to NOTIFY_ANSWER_PATH.

/**
 * `POST` with a `NotificationAnswer` as JSON, no bearer token: the
 * capability is the credential. Relative to the server's address (and its
 * path prefix, behind a proxy that keeps one).
 */
export const NOTIFY_ANSWER_PATH = "/notify/answer";

/** What a notification is about. */
export const NoticeKind = {
  /** A permission request waits for an answer. */
  Permission: "permission",
  /** A prompt turn ended. */
  TurnEnded: "turn_ended",
  /** A turn ended in an error, or an agent stopped for good. */
  Failed: "failed",
} as const;
export type NoticeKind = (typeof NoticeKind)[keyof typeof NoticeKind];

/** One button of a permission notification: an option the agent offered. */
export interface NotificationAction {
  optionId: string;
  /** The option's kind: `allow_once` or `reject_once`. */
  kind: string;
  /** The option's name as the agent gave it. */
  label: string;
}

/** The payload of a Web Push message (encrypted, RFC 8291), as the service worker reads it. */
export interface NotificationPayload {
  kind: NoticeKind;
  /** One notification per session at a time: a newer one with the same tag replaces it. */
  tag: string;
  title: string;
  body: string;
  /** Where tapping it leads, relative to the app: the session's page (`#/s/<agent>/<sessionId>`), or the list. */
  url: string;
  sessionId?: string;
  /** The permission request it offers to answer (the id the session's clients see). */
  requestId?: string;
  /** Present on a permission request: the one-use capability and the options it may answer with. */
  answer?: { capability: string; actions: NotificationAction[] };
}

/** The body of an answer: the capability of the notification and the option chosen. */
export interface NotificationAnswer {
  capability: string;
  optionId: string;
}

/** The body of a 200 answer to NOTIFY_ANSWER_PATH. */
export interface NotificationAnswered {
  answered: true;
  optionId: string;
}
