// What a person reads for a session and for a connection, the same in every
// view: the editor's tree and tabs, and the phone's pages. Session ids are
// the agent's own (often "<agent>-<uuid>" or "session-<n>") or random UUIDs,
// so their end, not their start, tells sessions apart.

/** How many characters of a session id end its short form. */
const SHORT_SESSION_ID_CHARS = 6;

/** What the editor calls its own link to the server (the control channel, which its session tabs use). */
export const EDITOR_CONNECTION_NAME = "this editor";

/** The end of a session id, which tells it apart from the person's other sessions. */
export function shortSessionId(sessionId: string): string {
  return sessionId.slice(-SHORT_SESSION_ID_CHARS);
}

export interface NamedSession {
  sessionId: string;
  agent: string;
  /** The agent's title (session_info_update), or its first prompt's, when there is one. */
  title?: string | null | undefined;
}

/** A session's name: its title when it has one, else "agent · short id". */
export function sessionName(session: NamedSession): string {
  const title = session.title?.trim();
  return title ? title : `${session.agent} · ${shortSessionId(session.sessionId)}`;
}

export interface NamedConnection {
  /** Label of the person it authenticated as ("owner" for the server's own tokens). */
  principal: string;
  /** The paired device whose token it uses, if any. */
  deviceId?: string | undefined;
}

/**
 * A connection's name: the paired device's name when it uses a device's
 * token, else the person its token stands for ("owner" for the server's own
 * access token used from elsewhere).
 */
export function connectionName(connection: NamedConnection, devices: ReadonlyArray<{ deviceId: string; label: string }>): string {
  if (connection.deviceId !== undefined) {
    const device = devices.find((d) => d.deviceId === connection.deviceId);
    if (device) return device.label;
  }
  return connection.principal;
}
