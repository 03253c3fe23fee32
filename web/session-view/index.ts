// Entry of the session view bundle (dist/web/session-view.js and .css).
import "./session-view.css";

export { createSessionView } from "./session-view.ts";
export type { ConnectionState, EarlierPage, PermissionRequestId, PermissionSettlement, SessionView, SessionViewHost } from "./api.ts";
