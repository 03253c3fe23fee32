// The web client's service worker (built as sw.js beside the page, registered
// as `./sw.js` with scope `./`, so it follows any path prefix; its scope is
// the page's base). It does three things:
//   - keeps the app shell (the page, its script and style sheet, the manifest
//     and icons of this build), so the page opens without network and says
//     plainly that the server is out of reach;
//   - shows the server's Web Push messages (protocol/notify.ts), one per
//     session at a time (they share a tag), a waiting permission request with
//     the options the agent offered as its buttons;
//   - answers from a button: a POST of the notification's one-use capability
//     to the server's answer endpoint, or, for a tap on the notification
//     itself, opens the session's page.
import { NOTIFY_ANSWER_PATH, NoticeKind, type NotificationAnswer, type NotificationPayload } from "../../protocol/notify.ts";

// What the page's DOM types lack of a service worker's world (TypeScript's
// "webworker" library cannot be loaded beside "DOM"), as far as it is used here.
interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface PushEvent extends ExtendableEvent {
  readonly data: { json(): unknown } | null;
}
interface NotificationEvent extends ExtendableEvent {
  readonly notification: Notification;
  readonly action: string;
}
interface WindowClient {
  readonly url: string;
  focus(): Promise<WindowClient>;
  navigate(url: string): Promise<WindowClient | null>;
}
interface WorkerScope {
  readonly registration: ServiceWorkerRegistration;
  readonly clients: {
    matchAll(options: { type: "window"; includeUncontrolled: boolean }): Promise<WindowClient[]>;
    openWindow(url: string): Promise<WindowClient | null>;
    claim(): Promise<void>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: "install" | "activate", listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: "fetch", listener: (event: FetchEvent) => void): void;
  addEventListener(type: "push", listener: (event: PushEvent) => void): void;
  addEventListener(type: "notificationclick", listener: (event: NotificationEvent) => void): void;
}
/** NotificationOptions with the members the page's DOM types leave out. */
type ShowOptions = NotificationOptions & { actions?: Array<{ action: string; title: string }>; renotify?: boolean };

declare const self: WorkerScope;
/** The app shell of this build, relative to the scope (set by scripts/build-web-client.mjs). */
declare const __SHELL__: readonly string[];
/** A hash of the shell's files: a new build gets a new cache, and the old one goes. */
declare const __SHELL_VERSION__: string;

const CACHE = `acp-remote-shell-${__SHELL_VERSION__}`;
const CACHE_PREFIX = "acp-remote-shell-";

const scoped = (path: string): string => new URL(path, self.registration.scope).href;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(__SHELL__.map(scoped)))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name.startsWith(CACHE_PREFIX) && name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

// The shell from the network while it is there (so a new build shows at once), from the cache when it is not.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  url.hash = "";
  url.search = "";
  const page = request.mode === "navigate" && (url.href === scoped("./") || url.href === scoped("index.html"));
  if (!page && !__SHELL__.some((path) => scoped(path) === url.href)) return;
  event.respondWith(
    fetch(request).then(
      (response) => {
        if (response.ok) {
          const copy = response.clone();
          void caches.open(CACHE).then((cache) => cache.put(page ? scoped("./") : url.href, copy));
        }
        return response;
      },
      async (error: unknown) => {
        const cached = await caches.match(page ? scoped("./") : url.href, { cacheName: CACHE });
        if (cached === undefined) throw error;
        return cached;
      },
    ),
  );
});

self.addEventListener("push", (event) => {
  let payload: NotificationPayload | undefined;
  try {
    payload = event.data?.json() as NotificationPayload | undefined;
  } catch {
    // Not the server's JSON: the browser shows its own generic notice for a push that shows none.
  }
  if (payload === undefined) return;
  event.waitUntil(show(payload));
});

function show(payload: NotificationPayload, body = payload.body): Promise<void> {
  const options: ShowOptions = {
    body,
    tag: payload.tag,
    data: payload,
    icon: scoped("icon-192.png"),
    // Each waiting request buzzes once; a turn's end quietly replaces what the session showed.
    renotify: payload.kind === NoticeKind.Permission,
    requireInteraction: payload.kind === NoticeKind.Permission,
    actions: (payload.answer?.actions ?? []).map((a) => ({ action: a.optionId, title: a.label })),
  };
  return self.registration.showNotification(payload.title, options);
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(clicked(event.notification, event.action));
});

async function clicked(notification: Notification, action: string): Promise<void> {
  const payload = notification.data as NotificationPayload | undefined;
  notification.close();
  const chosen = payload?.answer?.actions.find((a) => a.optionId === action);
  if (payload !== undefined && chosen !== undefined) return answer(payload, chosen.optionId);
  return openPage(payload?.url ?? "#/");
}

/** Sends the answer with the notification's capability; says so when it did not count. */
async function answer(payload: NotificationPayload, optionId: string): Promise<void> {
  const body: NotificationAnswer = { capability: payload.answer!.capability, optionId };
  let status: number;
  try {
    const response = await fetch(new URL(`.${NOTIFY_ANSWER_PATH}`, self.registration.scope), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    });
    status = response.status;
  } catch {
    status = 0;
  }
  if (status === 200) return;
  if (status === 0 || status >= 500) {
    // The answer did not arrive: the same notification again, to try once the server is in reach.
    await show(payload, `The server is out of reach; the answer was not sent. ${payload.body}`);
    return;
  }
  const { answer: _used, ...rest } = payload;
  await show({ ...rest, title: "Already answered", body: `${payload.title}: this request was answered elsewhere, or it is no longer waiting.` });
}

/** The app's window on `url` (relative to the scope): one already open is brought forward. */
async function openPage(url: string): Promise<void> {
  const target = scoped(url);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((w) => w.url.startsWith(self.registration.scope));
  if (open !== undefined) {
    await open.navigate(target);
    // Brought forward where the browser lets the worker do so (a person's tap does).
    await open.focus().catch(() => undefined);
    return;
  }
  await self.clients.openWindow(target);
}
