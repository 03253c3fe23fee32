// The requests of one Streamable HTTP connection on /acp, made raw with a
// ProtocolClient and the test token: a POST of one message, and the GET that
// opens the connection's stream or a session's, resuming after an event when
// given its id.
import type { OpenedSse, ProtocolClient, RawResponse } from "./http-clients.ts";
import { TOKEN } from "./transport-server.ts";

const AUTH = { authorization: `Bearer ${TOKEN}` };

/** GET /acp: the connection's stream, or the session's with `sessionId`; with `lastEventId`, a resume after that event. */
export function openStream(client: ProtocolClient, connectionId: string, sessionId?: string, lastEventId?: string): Promise<OpenedSse | RawResponse> {
  return client.openSse("/acp", {
    ...AUTH,
    accept: "text/event-stream",
    "acp-connection-id": connectionId,
    ...(sessionId === undefined ? {} : { "acp-session-id": sessionId }),
    ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
  });
}

/** POST /acp of one message on the connection, naming the session with `sessionId`. */
export function post(client: ProtocolClient, connectionId: string, sessionId: string | undefined, message: unknown): Promise<RawResponse> {
  return client.request("POST", "/acp", {
    headers: { ...AUTH, "content-type": "application/json", "acp-connection-id": connectionId, ...(sessionId === undefined ? {} : { "acp-session-id": sessionId }) },
    body: JSON.stringify(message),
  });
}
