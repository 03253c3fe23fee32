// What waits for the person, seen from outside the page: the tab's title and
// the app's badge (on the home-screen icon, where the browser offers
// `navigator.setAppBadge`) count the sessions that wait for an answer to a
// permission request, and the title names the session on screen when it is
// one of them. The list tells what session/list said; a session screen tells
// its own session's state as the server's state updates say it.

const APP_NAME = "ACP Remote";

/** The sessions waiting for the person, by `sessionKey`, with their titles. */
const waiting = new Map<string, string>();
/** The session on screen (its `sessionKey`), or undefined on the list. */
let onScreen: string | undefined;

type BadgeNavigator = Navigator & { setAppBadge?(count?: number): Promise<void>; clearAppBadge?(): Promise<void> };

export function sessionKey(agent: string, sessionId: string): string {
  return `${agent}\n${sessionId}`;
}

/** From the list: exactly these sessions wait. */
export function setWaitingSessions(sessions: Iterable<{ key: string; title: string }>): void {
  waiting.clear();
  for (const { key, title } of sessions) waiting.set(key, title);
  show();
}

/** From a session screen: whether its session waits now. */
export function setSessionWaiting(key: string, title: string, isWaiting: boolean): void {
  if (isWaiting) waiting.set(key, title);
  else waiting.delete(key);
  show();
}

/** The session now on screen, or undefined for the list. */
export function setOnScreen(key: string | undefined): void {
  onScreen = key;
  show();
}

function show(): void {
  const here = onScreen === undefined ? undefined : waiting.get(onScreen);
  document.title = here !== undefined ? `Waiting: ${here}` : waiting.size > 0 ? `(${waiting.size}) ${APP_NAME}` : APP_NAME;
  const nav = navigator as BadgeNavigator;
  // Badges exist for installed apps in some browsers only; elsewhere the title says it.
  const set = waiting.size > 0 ? nav.setAppBadge?.(waiting.size) : nav.clearAppBadge?.();
  set?.catch(() => undefined);
}
