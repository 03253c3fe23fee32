// How the editor describes a session and a connection in its lists (the
// tree, the Open Session pick): who follows the session, named as a person
// knows them (protocol/names.ts): "this editor" for a session open in one of
// its tabs, a paired device by its name, the owner's access token as "owner".
import type { ConnectionInfo, SessionInfo, StatusSnapshot } from "../../protocol/control.ts";
import { connectionName, EDITOR_CONNECTION_NAME } from "../../protocol/names.ts";

/** Who follows the session now: this editor when one of its tabs shows it, then the remote connections attached to it. */
export function sessionFollowers(session: SessionInfo, status: Pick<StatusSnapshot, "connections" | "devices">, openHere: boolean): string[] {
  const remote = status.connections.filter((c) => c.sessions.includes(session.sessionId)).map((c) => connectionName(c, status.devices));
  return [...(openHere ? [EDITOR_CONNECTION_NAME] : []), ...remote];
}

/** "attached to this editor, Pixel 8 · running", or "detached". */
export function sessionDescription(session: SessionInfo, followers: string[]): string {
  const state = followers.length > 0 ? `attached to ${followers.join(", ")}` : "detached";
  return session.running ? `${state} · running` : state;
}

/** "websocket · 1 session". */
export function connectionDescription(connection: Pick<ConnectionInfo, "profile" | "sessions">): string {
  return `${connection.profile} · ${connection.sessions.length} ${connection.sessions.length === 1 ? "session" : "sessions"}`;
}
