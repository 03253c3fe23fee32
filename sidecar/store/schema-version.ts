// What both stores answer when the data they find was written by a newer
// acp-remote: a schema version above the last one this acp-remote knows. Such
// data is refused before anything is written to it, so the newer version that
// wrote it can still open it as it left it.
import { VERSION } from "../../protocol/version.ts";

/**
 * One migration of a store: what it changes, and the schema version the store
 * is at once it ran. `Done` is what `up` returns: nothing for the embedded
 * store (synchronous, inside a transaction), a promise for Redis.
 */
export interface Migration<Target, Done = void> {
  /** The schema version it brings the store to: the migrations of a store are numbered 1, 2, 3, … in order. */
  readonly version: number;
  /** What it changes, in a few words (said in errors). */
  readonly summary: string;
  up(target: Target): Done;
}

/** The version the last of `migrations` brings a store to (0 for none). */
export function latestVersion(migrations: readonly { readonly version: number }[]): number {
  return migrations.at(-1)?.version ?? 0;
}

export class StoreVersionError extends Error {
  /** The version the store is at, and the latest this acp-remote knows. */
  readonly found: number;
  readonly known: number;

  /** `advice`: what to do, and whether anything was written, as one sentence. */
  constructor(where: string, found: number, known: number, advice: string) {
    super(`${where} was written by a newer acp-remote: it is at schema version ${found}, and acp-remote ${VERSION} knows versions up to ${known}. ${advice}.`);
    this.name = "StoreVersionError";
    this.found = found;
    this.known = known;
  }
}
