// The Web Push subscriptions of paired devices, as /acp's extension methods
// (`_acp-remote/push/subscribe`, `…/unsubscribe`) reach them. A subscription
// is kept in the store with its device (on a shared store every node sends
// to it), replaces the device's earlier one, and goes with the device when
// it is revoked; a push service that says it is gone removes it too.
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { isRecord } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { DevicePush } from "../hub/types.ts";
import type { DeviceStore } from "../store/shared-store.ts";
import { DEFAULT_PUSH_SUBSCRIPTION_BYTES } from "./limits.ts";
import type { PushSubscriptionJson } from "./web-push-sender.ts";

/** RFC 8291: the browser's P-256 public key, uncompressed (65 bytes), and its 16-byte auth secret. */
const P256DH_BYTES = 65;
const AUTH_BYTES = 16;

function base64urlBytes(value: unknown): number | undefined {
  if (typeof value !== "string" || !/^[A-Za-z0-9_-]+=*$/.test(value)) return undefined;
  return Buffer.from(value, "base64url").length;
}

/** The subscription a client sent, checked; RpcFailure InvalidParams saying what is wrong. */
function parseSubscription(value: unknown): PushSubscriptionJson {
  const invalid = (why: string): RpcFailure => new RpcFailure(ErrorCode.InvalidParams, `subscription: ${why}`);
  if (!isRecord(value)) throw invalid("a PushSubscription as JSON is required");
  const endpoint = value["endpoint"];
  if (typeof endpoint !== "string") throw invalid("endpoint is required");
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw invalid("endpoint is not a URL");
  }
  // Push services are HTTPS (RFC 8030 §8); the server posts nowhere else.
  if (url.protocol !== "https:") throw invalid("endpoint must be an https: URL");
  const keys = value["keys"];
  if (!isRecord(keys)) throw invalid("keys is required");
  if (base64urlBytes(keys["p256dh"]) !== P256DH_BYTES) throw invalid(`keys.p256dh must be ${P256DH_BYTES} bytes, base64url`);
  if (base64urlBytes(keys["auth"]) !== AUTH_BYTES) throw invalid(`keys.auth must be ${AUTH_BYTES} bytes, base64url`);
  const parsed: PushSubscriptionJson = { endpoint, keys: { p256dh: keys["p256dh"] as string, auth: keys["auth"] as string } };
  if (Buffer.byteLength(JSON.stringify(parsed)) > DEFAULT_PUSH_SUBSCRIPTION_BYTES) throw invalid(`longer than ${DEFAULT_PUSH_SUBSCRIPTION_BYTES} bytes`);
  return parsed;
}

export class DevicePushSubscriptions implements DevicePush {
  readonly applicationServerKey: string;
  readonly #store: DeviceStore;

  constructor(store: DeviceStore, applicationServerKey: string) {
    this.#store = store;
    this.applicationServerKey = applicationServerKey;
  }

  async subscribe(deviceId: string, subscription: unknown): Promise<void> {
    const parsed = parseSubscription(subscription);
    if (!(await this.#store.setPush(deviceId, JSON.stringify(parsed)))) throw new RpcFailure(ErrorCode.InvalidRequest, "this device is no longer paired");
  }

  async unsubscribe(deviceId: string): Promise<void> {
    await this.#store.setPush(deviceId, undefined);
  }
}
