// The fan-out of one session to the client connections following it: every
// update to each, a permission request offered to each (first answer wins),
// withdrawn from the others, and the multi-client attach proposal's
// `permission_resolved` notice to the clients that joined with session/attach.
import type { RequestPermissionOutcome } from "@agentclientprotocol/sdk";
import { Acp, AcpExt } from "../../protocol/acp.ts";
import type { PermissionClient } from "./permissions.ts";
import type { HubSession, SessionOwner } from "./session.ts";

/** A notification to every client of the session, but `except` (e.g. the one that sent the prompt). */
export function notifyClients(session: HubSession, method: string, params: unknown, except?: SessionOwner): void {
  for (const client of session.clients) if (client !== except) client.sendNotification(method, params, session.id);
}

/** The PermissionClient of a session: its current clients, whoever they are when it is used. */
export function sessionPermissionClient(session: HubSession): PermissionClient {
  return {
    offer: (requestId, params, to) => {
      const offered: string[] = [];
      for (const client of session.clients) {
        if (to !== undefined && client.connectionId !== to) continue;
        if (client.sendRequest(requestId, Acp.client.session.requestPermission, params, session.id)) offered.push(client.connectionId);
      }
      return offered;
    },
    follows: (connectionId) => {
      for (const client of session.clients) if (client.connectionId === connectionId) return true;
      return false;
    },
    withdraw: (requestId, resolution) => {
      // The notice goes first, so an attacher knows the request was answered
      // (not merely withdrawn) when the $/cancel_request for it comes.
      const notice = permissionResolved(session.id, requestId, resolution.outcome, resolution.answeredBy);
      for (const client of session.attachers) client.sendNotification(Acp.client.session.update, notice, session.id);
      for (const client of session.clients) {
        if (client.connectionId === resolution.answeredBy) continue;
        client.sendNotification(Acp.protocol.cancelRequest, { requestId }, session.id);
      }
    },
  };
}

/** The proposal's notice that a permission request was settled, and by whom. */
function permissionResolved(sessionId: string, requestId: string, outcome: RequestPermissionOutcome, answeredBy: string | undefined): unknown {
  return {
    sessionId,
    update: {
      sessionUpdate: AcpExt.permissionResolved,
      requestId,
      outcome,
      ...(answeredBy === undefined ? {} : { clientId: answeredBy }),
    },
  };
}
