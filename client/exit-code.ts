// Exit codes of `acp-remote connect`: what an editor or a script can act on.

export const ExitCode = {
  /** The editor closed stdin. */
  Ok: 0,
  /** The server could not be reached, or reconnecting gave up. */
  ConnectionFailed: 1,
  /** Bad command line. */
  Usage: 2,
  /** The server refused the credentials. */
  Unauthorized: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
