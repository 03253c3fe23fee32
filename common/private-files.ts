// Folders and files that only the user who runs acp-remote may read: the
// data folder holds every person's sessions, journals and deferred results,
// the access token and the TLS key. Modes are given when a file or folder is
// created (the umask can only take permissions away from them); what existed
// before is tightened by the server at start (sidecar/server/data-folder.ts).
import { mkdirSync } from "node:fs";

/** rwx for the owner, nothing for anyone else. */
export const PRIVATE_FOLDER_MODE = 0o700;
/** rw for the owner, nothing for anyone else. */
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` and any missing parent, each readable by its owner only; an existing folder is left as it is. */
export function makePrivateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_FOLDER_MODE });
}
