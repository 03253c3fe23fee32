// What a node says when it opens a link to another node's /acp for one of its
// clients (several sidecars on one shared store): "node FROM, to node TO, for
// this person, now". The claim is signed with the node secret, which every
// node has from its configuration (ACP_REMOTE_NODE_SECRET or
// --node-secret-file) and which is never written to the store: whoever can
// read the store, or sits between two nodes, cannot act for anyone.
//
// On the wire, in the `acp-remote-on-behalf-of` header:
//
//   <payload>.<mac>
//
// payload: base64url of JSON { v: 1, from, to, principal: { id, label,
// deviceId? }, at (ms since the epoch), nonce }; mac: base64url of
// HMAC-SHA256(secret, "acp-remote node claim\n" + payload). The node named
// `to` accepts a claim once, within DEFAULT_NODE_CLAIM_WINDOW_MS of `at`.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isRecord } from "../../protocol/jsonrpc.ts";
import type { Principal } from "../hub/types.ts";
import { DEFAULT_NODE_CLAIM_MAX_CHARS, DEFAULT_NODE_CLAIM_NONCES_KEPT, DEFAULT_NODE_CLAIM_WINDOW_MS, DEFAULT_NODE_SECRET_MIN_CHARS } from "./limits.ts";

const VERSION = 1;
/** Keeps a MAC of this scheme from ever matching one the same secret made for anything else. */
const MAC_CONTEXT = "acp-remote node claim\n";
const NONCE_BYTES = 16;
/** Bytes of an HMAC-SHA256. */
const MAC_BYTES = 32;

/** Why a node secret cannot be used, or undefined when it can. */
export function nodeSecretProblem(secret: string | undefined): string | undefined {
  if (secret === undefined || secret.length === 0) return "no node secret is set";
  if (secret.length < DEFAULT_NODE_SECRET_MIN_CHARS) return `the node secret has ${secret.length} characters; it needs at least ${DEFAULT_NODE_SECRET_MIN_CHARS}`;
  return undefined;
}

function mac(secret: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(MAC_CONTEXT).update(payload).digest();
}

/** The claim node `from` sends to node `to` for `principal`. */
export function signNodeClaim(secret: string, claim: { from: string; to: string; principal: Principal; at?: number }): string {
  const { id, label, deviceId } = claim.principal;
  const body = {
    v: VERSION,
    from: claim.from,
    to: claim.to,
    principal: deviceId === undefined ? { id, label } : { id, label, deviceId },
    at: claim.at ?? Date.now(),
    nonce: randomBytes(NONCE_BYTES).toString("base64url"),
  };
  const payload = Buffer.from(JSON.stringify(body)).toString("base64url");
  return `${payload}.${mac(secret, payload).toString("base64url")}`;
}

/** Checks the claims other nodes send this one. */
export class NodeClaims {
  readonly #secret: string;
  readonly #nodeId: string;
  readonly #windowMs: number;
  readonly #clock: () => number;
  /** Nonces of the claims accepted within the window, with when each may be forgotten: a claim is good once. */
  readonly #seen = new Map<string, number>();

  constructor(options: { secret: string; nodeId: string; windowMs?: number; clock?: () => number }) {
    this.#secret = options.secret;
    this.#nodeId = options.nodeId;
    this.#windowMs = options.windowMs ?? DEFAULT_NODE_CLAIM_WINDOW_MS;
    this.#clock = options.clock ?? Date.now;
  }

  /** The person a claim speaks for, or undefined when it is not a good claim for this node now. */
  verify(claim: string): Principal | undefined {
    if (claim.length > DEFAULT_NODE_CLAIM_MAX_CHARS) return undefined;
    const dot = claim.indexOf(".");
    if (dot <= 0 || dot !== claim.lastIndexOf(".")) return undefined;
    const payload = claim.slice(0, dot);
    const given = Buffer.from(claim.slice(dot + 1), "base64url");
    if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(this.#secret, payload))) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    if (!isRecord(body) || body["v"] !== VERSION || body["to"] !== this.#nodeId || typeof body["from"] !== "string") return undefined;
    const at = body["at"];
    const nonce = body["nonce"];
    const now = this.#clock();
    if (typeof at !== "number" || Math.abs(now - at) > this.#windowMs || typeof nonce !== "string") return undefined;
    const principal = principalOf(body["principal"]);
    if (principal === undefined) return undefined;
    this.#forgetOld(now);
    if (this.#seen.has(nonce)) return undefined;
    this.#seen.set(nonce, at + this.#windowMs);
    return principal;
  }

  /**
   * Nonces whose claims are past the window are forgotten (a replay of one
   * is refused by its time anyway). The map is bounded too; past the bound
   * the oldest go first, which only claims made by the nodes themselves can
   * reach, the secret being theirs alone.
   */
  #forgetOld(now: number): void {
    for (const [nonce, until] of this.#seen) {
      if (until >= now && this.#seen.size < DEFAULT_NODE_CLAIM_NONCES_KEPT) break;
      this.#seen.delete(nonce);
    }
  }
}

function principalOf(value: unknown): Principal | undefined {
  if (!isRecord(value) || typeof value["id"] !== "string" || typeof value["label"] !== "string") return undefined;
  const principal: { id: string; label: string; deviceId?: string } = { id: value["id"], label: value["label"] };
  if (typeof value["deviceId"] === "string") principal.deviceId = value["deviceId"];
  return principal;
}
