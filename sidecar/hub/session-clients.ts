// The fan-out of one session to the client connections following it: every
// update to each, a permission request offered to each (first answer wins),
// withdrawn from the others, and the multi-client attach proposal's
// `permission_resolved` notice to the clients that joined with session/attach.
import { Acp, AcpExt } from "../../protocol/acp.ts";
import type { PermissionResolvedMeta } from "../../protocol/permission-outcome.ts";
import type { PermissionClient, PermissionSettlement } from "./permissions.ts";
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
    deviceOf: (connectionId) => {
      for (const client of session.clients) if (client.connectionId === connectionId) return client.deviceId;
      return undefined;
    },
    withdraw: (requestId, resolution) => {
      // The notice goes first, so an attacher knows the request was answered
      // (not merely withdrawn) when the $/cancel_request for it comes.
      const notice = permissionResolved(session.id, requestId, resolution);
      for (const client of session.attachers) client.sendNotification(Acp.client.session.update, notice, session.id);
      for (const client of session.clients) {
        if (client.connectionId === resolution.answeredBy) continue;
        client.sendNotification(Acp.protocol.cancelRequest, { requestId }, session.id);
      }
    },
  };
}

/**
 * The proposal's notice that a permission request was settled, and by whom:
 * the answering client's id (the proposal's `clientId`), and under
 * `_meta.acpRemote` who settled it (a client, the editor, a notification, or
 * nobody: the agent, the wait, the turn's end) and the paired device's name
 * when a device answered, so a page can say "Allowed on Pixel 8".
 */
function permissionResolved(sessionId: string, requestId: string, resolution: PermissionSettlement & { answeredBy?: string }): unknown {
  const { outcome, answeredBy, by, device } = resolution;
  return {
    sessionId,
    update: {
      sessionUpdate: AcpExt.permissionResolved,
      requestId,
      outcome,
      ...(answeredBy === undefined ? {} : { clientId: answeredBy }),
      _meta: { [AcpExt.metaKey]: { settledBy: by, ...(device === undefined ? {} : { device }) } satisfies PermissionResolvedMeta },
    },
  };
}
