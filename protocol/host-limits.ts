// Limits of the ACP host methods (fs/*, terminal/*), with their units. Both hosts
// enforce them: the sidecar's own and the editor's, so an agent meets the same
// bounds whichever side serves it.

/** Terminals: time between SIGTERM and SIGKILL of a command's process group on kill or release, in milliseconds. */
export const DEFAULT_TERMINAL_KILL_GRACE_MS = 2_000;
/** Output kept per terminal when the agent sets no limit, in bytes. */
export const DEFAULT_TERMINAL_OUTPUT_BYTES = 1024 * 1024;
/** Terminals open at once per session. */
export const DEFAULT_MAX_TERMINALS_PER_SESSION = 16;
/** Largest file served by fs/read_text_file, in bytes. */
export const DEFAULT_MAX_READ_FILE_BYTES = 16 * 1024 * 1024;
