// One-use capabilities that let a notification answer exactly one permission
// request: random (256 bits), kept in memory only as their SHA-256, each bound
// to one channel (a paired device, or the ntfy topic), one request and the
// options its buttons offer. A capability is used up by its first use,
// whatever comes of it, and dies when its request is settled (answered
// anywhere, withdrawn, timed out), when its device is revoked, or when the
// channel's subscription is dropped.
//
// A capability names the node that issued it, because the request it answers
// waits on that node: on a shared store, an answer that reached another node
// is passed on to that one (answer-route.ts).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { DEFAULT_ANSWER_CAPABILITY_BYTES, DEFAULT_MAX_ANSWER_CAPABILITIES } from "./limits.ts";

export interface CapabilityGrant {
  /** `device:<id>` or `ntfy`. */
  channel: string;
  permissionId: string;
  /** The options the notification offers: the only ones it may answer with. */
  optionIds: readonly string[];
}

/** What a redemption found: the grant, or why there is none. */
export type Redemption = { kind: "granted"; grant: CapabilityGrant } | { kind: "refused"; reason: string };

/** The node part and the secret part of a capability: `<node, base64url>.<secret>`. */
export function capabilityNode(capability: string): string | undefined {
  const dot = capability.indexOf(".");
  if (dot <= 0) return undefined;
  try {
    return Buffer.from(capability.slice(0, dot), "base64url").toString("utf8");
  } catch {
    return undefined;
  }
}

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

export class AnswerCapabilities {
  readonly #nodeTag: string;
  readonly #max: number;
  /** By the hex of the secret's digest, oldest first (a Map keeps insertion order). */
  readonly #grants = new Map<string, CapabilityGrant & { digest: Buffer }>();

  constructor(nodeId: string, max = DEFAULT_MAX_ANSWER_CAPABILITIES) {
    this.#nodeTag = Buffer.from(nodeId, "utf8").toString("base64url");
    this.#max = max;
  }

  /** A new capability for the grant; the oldest goes when there are `max` already. */
  issue(grant: CapabilityGrant): string {
    const secret = randomBytes(DEFAULT_ANSWER_CAPABILITY_BYTES).toString("base64url");
    const d = digest(secret);
    while (this.#grants.size >= this.#max) {
      const oldest = this.#grants.keys().next().value;
      if (oldest === undefined) break;
      this.#grants.delete(oldest);
    }
    this.#grants.set(d.toString("hex"), { ...grant, optionIds: [...grant.optionIds], digest: d });
    return `${this.#nodeTag}.${secret}`;
  }

  /** Uses the capability up: its grant when it is alive and `optionId` is one it offers. */
  redeem(capability: string, optionId: string): Redemption {
    const dot = capability.indexOf(".");
    if (dot <= 0 || capability.slice(0, dot) !== this.#nodeTag) return { kind: "refused", reason: "unknown capability" };
    const d = digest(capability.slice(dot + 1));
    const key = d.toString("hex");
    const grant = this.#grants.get(key);
    // The map is keyed by the digest; the compare in constant time only guards against a lookup that leaks by timing.
    if (grant === undefined || !timingSafeEqual(grant.digest, d)) return { kind: "refused", reason: "this answer was used, or its request was answered or withdrawn" };
    this.#grants.delete(key);
    if (!grant.optionIds.includes(optionId)) return { kind: "refused", reason: `option ${JSON.stringify(optionId)} was not offered` };
    return { kind: "granted", grant: { channel: grant.channel, permissionId: grant.permissionId, optionIds: grant.optionIds } };
  }

  /** The request was settled: its capabilities die. */
  dropRequest(permissionId: string): void {
    for (const [key, grant] of this.#grants) if (grant.permissionId === permissionId) this.#grants.delete(key);
  }

  /** The channel is gone (a device revoked, a subscription dropped): its capabilities die. */
  dropChannel(channel: string): void {
    for (const [key, grant] of this.#grants) if (grant.channel === channel) this.#grants.delete(key);
  }

  get size(): number {
    return this.#grants.size;
  }
}
