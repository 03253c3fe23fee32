// The data folder at start: created readable by its owner only, or, when it
// is already there (made by an earlier version, by hand, or restored from a
// backup), tightened to that: its files hold every person's sessions,
// journals and deferred results, the access token and the TLS key, and
// nobody else on the machine should read them. What is tightened is logged,
// so that the owner knows the folder was open.
import { chmodSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { makePrivateFolder } from "../../common/private-files.ts";
import type { Log } from "../../protocol/log-line.ts";

/** The permission bits of group and others. */
const OTHERS_BITS = 0o077;

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/**
 * Creates `dir` (mode 0700) or takes every permission of group and others
 * away from it and from the files directly in it (0755 becomes 0700, 0644
 * becomes 0600). Symbolic links and the contents of sub-folders are left
 * alone. Nothing to do on Windows, whose files have no such modes.
 */
export function prepareDataFolder(dir: string, log: Log): void {
  makePrivateFolder(dir);
  if (process.platform === "win32") return;
  const tightened: string[] = [];
  const tighten = (path: string, name: string): void => {
    try {
      const mode = lstatSync(path).mode;
      if ((mode & OTHERS_BITS) === 0) return;
      chmodSync(path, mode & 0o777 & ~OTHERS_BITS);
      tightened.push(`${name} (was ${octal(mode)})`);
    } catch (error) {
      // Another user's file, say: the server still starts, and says what stays open.
      log(`acp-remote: could not make ${path} private: ${error instanceof Error ? error.message : String(error)}`, "warn");
    }
  };
  tighten(dir, "the folder");
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) tighten(join(dir, entry.name), entry.name);
  }
  if (tightened.length > 0) {
    log(`acp-remote: the data folder ${dir} was open to other users; only its owner may read it now: ${tightened.join(", ")}`, "warn");
  }
}
