// The session view as the session tab's script gets it: the tab loads the
// built bundle (dist/web/session-view.js) at run time rather than importing
// the view's code, so only the view's contract (web/session-view/api.ts, its
// types) is named here.
import type { SessionView, SessionViewHost, Unavailable } from "../../../web/session-view/api.ts";

export type { SessionView, SessionViewHost, Unavailable };

export interface SessionViewModule {
  createSessionView(root: HTMLElement, host: SessionViewHost): SessionView;
}
