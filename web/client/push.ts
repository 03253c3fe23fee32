// This browser's Web Push subscription, as the notify control needs it: can
// the page have one here, the one it has, and a new one made with the
// server's key. A subscription made with another key (the server's data was
// reset) is of no use: it is dropped and made again.
import { DEFAULT_PUSH_SUBSCRIBE_TIMEOUT_MS } from "./limits.ts";

/** Why this page cannot get notifications here, for the person; undefined when it can. */
export function pushUnavailable(): string | undefined {
  if (!isSecureContext) return "Notifications need this page over HTTPS.";
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    return "This browser gives this page no notifications; on an iPhone, add it to the Home Screen first and open it from there.";
  }
  return undefined;
}

/** The push service did not make the subscription in time (none in reach, or none at all). */
class PushTimeoutError extends Error {
  constructor() {
    super("The browser's push service did not answer, so notifications are still off. Try again later.");
    this.name = "PushTimeoutError";
  }
}

function keyBytes(key: string): Uint8Array<ArrayBuffer> {
  const base64 = key.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function madeWith(subscription: PushSubscription, key: string): boolean {
  const used = subscription.options.applicationServerKey;
  if (used === null) return false;
  const a = new Uint8Array(used);
  const b = keyBytes(key);
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** The subscription this browser holds for the server's key, if any (one for another key is dropped). */
export async function currentSubscription(registration: ServiceWorkerRegistration, key: string): Promise<PushSubscription | undefined> {
  const existing = await registration.pushManager.getSubscription();
  if (existing === null) return undefined;
  if (madeWith(existing, key)) return existing;
  await existing.unsubscribe().catch(() => false);
  return undefined;
}

/** A subscription for the server's key; rejects with PushTimeoutError when the push service does not answer in time. */
export async function subscribe(registration: ServiceWorkerRegistration, key: string, timeoutMs = DEFAULT_PUSH_SUBSCRIBE_TIMEOUT_MS): Promise<PushSubscription> {
  const existing = await currentSubscription(registration, key);
  if (existing !== undefined) return existing;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PushTimeoutError()), timeoutMs);
  });
  try {
    return await Promise.race([registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
