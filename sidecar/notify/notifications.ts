// Notifications a person can act on, put together for `serve`: the VAPID key
// pair from the store, the Web Push sender, the ntfy channel when one is
// configured, the one-use answer capabilities, the policy that listens to the
// hub, and the answer endpoint. Paired devices subscribe over /acp (the hub
// offers the subscription methods once this runs); a revoked device's
// capabilities die with it, as its subscription does in the store.
import type { Agent } from "node:https";
import { NOTIFY_ANSWER_PATH } from "../../protocol/notify.ts";
import type { DeviceRegistry } from "../devices/device-registry.ts";
import type { HubNotices } from "../hub/types.ts";
import type { Route } from "../http/types.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { AnswerCapabilities } from "./answer-capabilities.ts";
import { createAnswerRoute } from "./answer-route.ts";
import { Channels, deviceChannel } from "./channels.ts";
import { DevicePushSubscriptions } from "./device-push.ts";
import { NoticePolicy } from "./notice-policy.ts";
import { NtfySender, type NtfyTarget } from "./ntfy-sender.ts";
import { vapidKeys } from "./vapid-keys.ts";
import { WebPushSender } from "./web-push-sender.ts";
import type { Log } from "../../protocol/log-line.ts";

export interface NotificationsOptions {
  hub: HubNotices;
  store: SharedStore;
  devices: DeviceRegistry;
  /** The VAPID `sub` claim: a mailto: or https: URL of the server's operator. */
  subject: string;
  /** The ntfy topic (`--notify ntfy:URL/TOPIC`) and its server's token, if any. */
  ntfy?: { target: NtfyTarget; token?: string };
  /** Where a phone reaches the server (its public URL, else its own), for ntfy's links; read at each notice. */
  publicBase(): string;
  /** On a shared store: where a live node is reached, to pass an answer on to the node that holds its request. */
  nodeUrl?: (nodeId: string) => Promise<string | undefined>;
  nodeCa?: string;
  /** The HTTPS agent for push services (tests trust their stand-in's certificate with it). */
  pushAgent?: Agent;
  log: Log;
}

export interface RunningNotifications {
  /** POST /notify/answer. */
  route: Route;
  readonly capabilities: AnswerCapabilities;
  close(): void;
}

export async function startNotifications(options: NotificationsOptions): Promise<RunningNotifications> {
  const keys = await vapidKeys(options.store.settings);
  const capabilities = new AnswerCapabilities(options.store.nodeId);
  const webPush = new WebPushSender({ keys, subject: options.subject, ...(options.pushAgent === undefined ? {} : { agent: options.pushAgent }) });
  const channels = new Channels({
    devices: options.store.devices,
    capabilities,
    webPush,
    ...(options.ntfy === undefined
      ? {}
      : {
          ntfy: {
            sender: new NtfySender({ target: options.ntfy.target, ...(options.ntfy.token === undefined ? {} : { token: options.ntfy.token }) }),
            addresses: () => {
              const base = options.publicBase().replace(/\/+$/, "");
              return { answerUrl: `${base}${NOTIFY_ANSWER_PATH}`, base };
            },
          },
        }),
    log: options.log,
  });
  const policy = new NoticePolicy({
    hub: options.hub,
    deliver: (notice) => channels.deliver(notice).catch((error: unknown) => options.log(`notify: ${String(error)}`, "warn")),
    settled: (permissionId) => capabilities.dropRequest(permissionId),
  });
  options.hub.setDevicePush(new DevicePushSubscriptions(options.store.devices, keys.publicKey));
  const unsubscribe = options.devices.onRevoke((deviceId) => capabilities.dropChannel(deviceChannel(deviceId)));
  const route = createAnswerRoute({
    capabilities,
    hub: options.hub,
    nodeId: options.store.nodeId,
    ...(options.nodeUrl === undefined ? {} : { nodeUrl: options.nodeUrl }),
    ...(options.nodeCa === undefined ? {} : { nodeCa: options.nodeCa }),
  });
  return {
    route,
    capabilities,
    close() {
      unsubscribe();
      policy.close();
      options.hub.setDevicePush(undefined);
    },
  };
}
