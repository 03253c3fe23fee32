// Bearer-token authentication, shared by /acp and /v1 (design: decision 8).
// A principal is derived from the credential itself, so sessions and rate
// limits follow the key, never a transport id.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Principal } from "../../hub/types.ts";

/** The principal of every request when authentication is off (loopback only). */
export const ANONYMOUS: Principal = { id: "anonymous", label: "anonymous" };

export interface NamedToken {
  token: string;
  /** Label shown in views and logs; defaults to "token". */
  label?: string;
}

interface Entry {
  digest: Buffer;
  principal: Principal;
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export class Authenticator {
  #entries: Entry[] = [];
  readonly enabled: boolean;

  constructor(tokens: ReadonlyArray<string | NamedToken>, options: { enabled?: boolean } = {}) {
    this.enabled = options.enabled ?? true;
    this.setTokens(tokens);
  }

  /** Replaces the accepted tokens (rotation); open connections keep their principal. */
  setTokens(tokens: ReadonlyArray<string | NamedToken>): void {
    this.#entries = tokens.map((t) => {
      const { token, label } = typeof t === "string" ? { token: t, label: undefined } : t;
      const d = digest(token);
      return { digest: d, principal: { id: d.subarray(0, 8).toString("hex"), label: label ?? "token" } };
    });
  }

  /**
   * The principal a token stands for, or undefined. Every configured token is
   * compared, in constant time over equal-length digests, so neither the
   * match position nor the token length shows in the timing.
   */
  authenticate(token: string | undefined): Principal | undefined {
    if (!this.enabled) return ANONYMOUS;
    if (token === undefined || token.length === 0) return undefined;
    const d = digest(token);
    let found: Principal | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, d) && found === undefined) found = entry.principal;
    }
    return found;
  }
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value);
  return match?.[1];
}
