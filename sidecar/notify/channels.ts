// Sends one notice on every channel of the server's person: each paired
// device's Web Push subscription (read from the store at each notice, so on a
// shared store any node reaches every device) and the ntfy topic. A
// permission notice gets a capability of its own on each channel, bound to
// that channel. A push service that says a subscription is gone (404, 410)
// has it removed from the store, and the capabilities of that channel die.
import { createHash } from "node:crypto";
import type { NotificationPayload } from "../../protocol/notify.ts";
import { NoticeKind } from "../../protocol/notify.ts";
import type { DeviceStore, StoredPush } from "../store/shared-store.ts";
import type { AnswerCapabilities } from "./answer-capabilities.ts";
import { DEFAULT_PUSH_TTL_S } from "./limits.ts";
import type { OutgoingNotice } from "./notice-policy.ts";
import type { NtfySender } from "./ntfy-sender.ts";
import type { PushSubscriptionJson, WebPushSender } from "./web-push-sender.ts";
import type { Log } from "../../protocol/log-line.ts";

/** The channel of a paired device's Web Push subscription. */
export function deviceChannel(deviceId: string): string {
  return `device:${deviceId}`;
}

/** The channel of the configured ntfy topic. */
const NTFY_CHANNEL = "ntfy";

export interface ChannelsOptions {
  devices: DeviceStore;
  capabilities: AnswerCapabilities;
  webPush?: WebPushSender;
  ntfy?: {
    sender: NtfySender;
    /** Where the phone reaches the answer endpoint and the web client (the public URL, else the server's own), read at each notice. */
    addresses(): { answerUrl: string; base: string };
  };
  log: Log;
}

/** RFC 8030 §5.4 topic of a tag: at most 32 base64url characters, the same for every notice of that tag. */
function topicOf(tag: string): string {
  return createHash("sha256").update(tag).digest("base64url").slice(0, 32);
}

export class Channels {
  readonly #options: ChannelsOptions;

  constructor(options: ChannelsOptions) {
    this.#options = options;
  }

  /** Sends on every channel; a channel that fails is logged and the others still get it. */
  async deliver(notice: OutgoingNotice): Promise<void> {
    const sends: Array<Promise<void>> = [];
    // ntfy first: it needs no read of the store.
    if (this.#options.ntfy) sends.push(this.#ntfy(this.#options.ntfy, notice));
    if (this.#options.webPush) {
      const webPush = this.#options.webPush;
      let pushes: StoredPush[] = [];
      try {
        pushes = await this.#options.devices.pushes();
      } catch (error) {
        this.#options.log(`notify: the devices' subscriptions could not be read: ${String(error)}`, "warn");
      }
      for (const push of pushes) sends.push(this.#push(webPush, push, notice));
    }
    await Promise.all(sends);
  }

  /** The payload for one channel: a permission's buttons carry a capability for that channel alone. */
  #payload(notice: OutgoingNotice, channel: string): NotificationPayload {
    const { permission, ...rest } = notice;
    const payload: NotificationPayload = { ...rest };
    if (permission === undefined) return payload;
    payload.requestId = permission.permissionId;
    if (permission.actions.length > 0) {
      const capability = this.#options.capabilities.issue({ channel, permissionId: permission.permissionId, optionIds: permission.actions.map((a) => a.optionId) });
      payload.answer = { capability, actions: permission.actions };
    }
    return payload;
  }

  async #push(webPush: WebPushSender, push: StoredPush, notice: OutgoingNotice): Promise<void> {
    const channel = deviceChannel(push.deviceId);
    let subscription: PushSubscriptionJson;
    try {
      subscription = JSON.parse(push.subscription) as PushSubscriptionJson;
    } catch {
      return;
    }
    const result = await webPush.send(subscription, this.#payload(notice, channel), {
      ttlSeconds: DEFAULT_PUSH_TTL_S,
      topic: topicOf(notice.tag),
      urgency: notice.kind === NoticeKind.Permission ? "high" : "normal",
    });
    if (result.kind === "gone") {
      this.#options.capabilities.dropChannel(channel);
      await this.#options.devices.dropPush(push.deviceId, push.subscription).catch(() => undefined);
      this.#options.log(`notify: the push service of device ${push.deviceId} answered ${result.status}: its subscription is dropped`);
    } else if (result.kind === "failed") {
      this.#options.log(`notify: Web Push to device ${push.deviceId} failed: ${result.message}`, "warn");
    }
  }

  async #ntfy(ntfy: NonNullable<ChannelsOptions["ntfy"]>, notice: OutgoingNotice): Promise<void> {
    const { answerUrl, base } = ntfy.addresses();
    try {
      await ntfy.sender.publish(ntfy.sender.message(this.#payload(notice, NTFY_CHANNEL), answerUrl, base));
    } catch (error) {
      this.#options.log(`notify: ntfy failed: ${error instanceof Error ? error.message : String(error)}`, "warn");
    }
  }
}
