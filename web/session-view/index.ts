// Entry of the session view bundle (dist/web/session-view.js and .css).
import "./session-view.css";

export { createSessionView } from "./session-view.ts";
export type { ConnectionState, EarlierPage, PermissionRequestId, PermissionResolution, PermissionSettlement, ProposedDiff, SessionView, SessionViewHost, Unavailable } from "./api.ts";
