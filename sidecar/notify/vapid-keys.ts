// The server's VAPID key pair (RFC 8292), which signs every Web Push message:
// made once and kept with the server's data, in the store, so that it
// survives restarts (a browser's subscription is bound to the public key it
// subscribed with) and every node of a shared store signs alike. Two nodes
// that start together may both make one: the store keeps the first, and both
// use that.
import type { SettingStore } from "../store/shared-store.ts";

/** The setting that holds the key pair, as JSON. */
const VAPID_SETTING = "webpush.vapid";

export interface VapidKeys {
  /** base64url of the uncompressed P-256 point: the browser's `applicationServerKey`. */
  publicKey: string;
  /** base64url of the private scalar. */
  privateKey: string;
}

export async function vapidKeys(settings: SettingStore): Promise<VapidKeys> {
  const stored = await settings.get(VAPID_SETTING);
  // web-push is loaded to make the pair, once per store: kept, it is read, not made.
  const json = stored ?? (await settings.putIfAbsent(VAPID_SETTING, JSON.stringify((await import("web-push")).default.generateVAPIDKeys())));
  const keys = JSON.parse(json) as Partial<VapidKeys>;
  if (typeof keys.publicKey !== "string" || typeof keys.privateKey !== "string") throw new Error(`the store's ${VAPID_SETTING} is not a key pair`);
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}
