// What waits for the person, seen from outside the page: the tab's title and
// the app's badge (on the home-screen icon, where the browser offers
// `navigator.setAppBadge`) count the sessions that wait for an answer to a
// permission request, and the title names the session on screen when it is
// one of them. The list tells what session/list said; a session screen tells
// its own session's state as the server's state updates say it. The title
// also names the screen: the list, a session by its title, the sign-in page.

const APP_NAME = "ACP Remote";

/** The sessions waiting for the person, by `sessionKey`, with their titles. */
const waiting = new Map<string, string>();
/** The session on screen, or undefined on another screen. */
let onScreen: ScreenMark | undefined;
/** The name of a screen that is no session (undefined: the list, named by the app alone). */
let screenName: string | undefined;

/** One session screen's claim to the title; the next screen opens before the last one closes. */
export interface ScreenMark {
  readonly key: string;
  /** The session's title, as the screen knows it now. */
  title: string;
}

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

/** The list is on screen. */
export function showList(): void {
  onScreen = undefined;
  screenName = undefined;
  show();
}

/** A screen that is no session and not the list (signing in, the server out of reach): the title names it. */
export function showScreen(name: string): void {
  onScreen = undefined;
  screenName = name;
  show();
}

/** Session `key` is on screen: the title names it, and says so while it waits. */
export function showSession(key: string, title: string): ScreenMark {
  const mark = { key, title };
  onScreen = mark;
  screenName = undefined;
  show();
  return mark;
}

/** The session of `mark` has a new title. */
export function renameSession(mark: ScreenMark, title: string): void {
  mark.title = title;
  if (waiting.has(mark.key)) waiting.set(mark.key, title);
  show();
}

/** The session screen of `mark` closed; another one may have taken its place already. */
export function leaveSession(mark: ScreenMark): void {
  if (onScreen !== mark) return;
  onScreen = undefined;
  show();
}

function show(): void {
  const here = onScreen === undefined ? undefined : waiting.get(onScreen.key);
  const count = waiting.size > 0 ? `(${waiting.size}) ` : "";
  const name = onScreen?.title ?? screenName;
  document.title = here !== undefined ? `Waiting: ${here}` : `${count}${name === undefined ? "" : `${name} · `}${APP_NAME}`;
  const nav = navigator as BadgeNavigator;
  // Badges exist for installed apps in some browsers only; elsewhere the title says it.
  const set = waiting.size > 0 ? nav.setAppBadge?.(waiting.size) : nav.clearAppBadge?.();
  set?.catch(() => undefined);
}
