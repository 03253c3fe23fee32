// Bearer-token authentication, shared by /acp, /v1 and the web client
// (design: decision 8). A principal is a person, not a token: the server's
// access tokens and its paired devices all stand for OWNER, so rotating the
// token or revoking a device orphans none of that person's sessions and
// deferred jobs; a labelled token (`{ token, label }`) is a person of its own.
import { timingSafeEqual } from "node:crypto";
import { tokenDigest, type DeviceRegistry } from "../devices/device-registry.ts";
import { OWNER, personPrincipal, type Principal } from "../hub/types.ts";

/** The principal of every request when authentication is off (loopback only): the one person at this machine. */
const ANONYMOUS: Principal = OWNER;

export interface NamedToken {
  token: string;
  /** The person the token stands for (its name in views and logs); without one, the token is the server's own person (OWNER). */
  label?: string;
}

/** What checks a claim of another node (sidecar/cluster/node-claim.ts). */
export interface NodeClaimCheck {
  verify(claim: string): Principal | undefined;
}

interface Entry {
  digest: Buffer;
  principal: Principal;
}

export class Authenticator {
  #entries: Entry[] = [];
  readonly enabled: boolean;
  readonly #devices: DeviceRegistry | undefined;
  /** Checks the claims of links from other nodes of a shared store; none on a single node. */
  #nodeClaims: NodeClaimCheck | undefined;

  constructor(tokens: ReadonlyArray<string | NamedToken>, options: { enabled?: boolean; devices?: DeviceRegistry } = {}) {
    this.enabled = options.enabled ?? true;
    this.#devices = options.devices;
    this.setTokens(tokens);
  }

  /** Accepts the claims of the other nodes of a shared store, on /acp only, speaking for the person they name. */
  setNodeClaims(claims: NodeClaimCheck): void {
    this.#nodeClaims = claims;
  }

  /** The person a claim of another node speaks for; undefined when it is no good (or this is no node of several). */
  nodeClaim(claim: string): Principal | undefined {
    return this.#nodeClaims?.verify(claim);
  }

  /** Replaces the accepted tokens (rotation): the person behind them stays the same. */
  setTokens(tokens: ReadonlyArray<string | NamedToken>): void {
    this.#entries = tokens.map((t) => {
      const { token, label } = typeof t === "string" ? { token: t, label: undefined } : t;
      return { digest: tokenDigest(token), principal: label === undefined ? OWNER : personPrincipal(label) };
    });
  }

  /**
   * The principal a token stands for, or undefined. Every configured token
   * (then every device's) is compared, in constant time over equal-length
   * digests, so neither the match position nor the token length shows in
   * the timing.
   */
  authenticate(token: string | undefined): Principal | undefined {
    if (!this.enabled) return ANONYMOUS;
    if (token === undefined || token.length === 0) return undefined;
    const d = tokenDigest(token);
    let found: Principal | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, d) && found === undefined) found = entry.principal;
    }
    if (found !== undefined) return found;
    const deviceId = this.#devices?.authenticate(d);
    return deviceId === undefined ? undefined : { ...OWNER, deviceId };
  }
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value);
  return match?.[1];
}
