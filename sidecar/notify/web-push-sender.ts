// Sends one notification to one browser's push service (RFC 8030), its
// payload encrypted for that browser (RFC 8291, aes128gcm) and the request
// signed with the server's VAPID key (RFC 8292), through the `web-push`
// package. A push service that answers 404 or 410 says the subscription is
// gone for good: the caller drops it.
import type { Agent } from "node:https";
import type { NotificationPayload } from "../../protocol/notify.ts";
import { DEFAULT_NOTIFY_SEND_TIMEOUT_MS } from "./limits.ts";
import type { VapidKeys } from "./vapid-keys.ts";

/** A browser's PushSubscription as JSON (`PushSubscription.toJSON()`). */
export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export type PushResult = { kind: "sent" } | { kind: "gone"; status: number } | { kind: "failed"; message: string };

export interface PushOptions {
  /** How long the push service may keep the message while the browser is offline, in seconds. */
  ttlSeconds: number;
  /** RFC 8030 §5.4: a newer message with the same topic replaces one the push service still holds. At most 32 base64url characters. */
  topic: string;
  /** RFC 8030 §5.3: "high" for what waits for the person, "normal" otherwise. */
  urgency: "normal" | "high";
}

export interface WebPushSenderOptions {
  keys: VapidKeys;
  /** The VAPID `sub` claim: a mailto: or https: URL push services may use to reach the server's operator. */
  subject: string;
  /** The HTTPS agent for the push services (tests give one that trusts their stand-in's certificate). */
  agent?: Agent;
  timeoutMs?: number;
}

export class WebPushSender {
  readonly #options: WebPushSenderOptions;

  constructor(options: WebPushSenderOptions) {
    this.#options = options;
  }

  get publicKey(): string {
    return this.#options.keys.publicKey;
  }

  async send(subscription: PushSubscriptionJson, payload: NotificationPayload, options: PushOptions): Promise<PushResult> {
    try {
      // Loaded at the first push (1.5 MB of heap with its crypto packages), not by every server.
      const webpush = (await import("web-push")).default;
      await webpush.sendNotification(subscription, JSON.stringify(payload), {
        vapidDetails: { subject: this.#options.subject, publicKey: this.#options.keys.publicKey, privateKey: this.#options.keys.privateKey },
        contentEncoding: "aes128gcm",
        TTL: options.ttlSeconds,
        topic: options.topic,
        urgency: options.urgency,
        timeout: this.#options.timeoutMs ?? DEFAULT_NOTIFY_SEND_TIMEOUT_MS,
        ...(this.#options.agent === undefined ? {} : { agent: this.#options.agent }),
      });
      return { kind: "sent" };
    } catch (error) {
      const status = (error as { statusCode?: unknown }).statusCode;
      if (status === 404 || status === 410) return { kind: "gone", status };
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "failed", message: typeof status === "number" ? `${message} (${status})` : message };
    }
  }
}
