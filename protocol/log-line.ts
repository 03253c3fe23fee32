// The sidecar's log lines on stderr when an editor hosts it (`--control
// stdio`): each line carries its level, `[warn] journal: a write failed ...`,
// and the editor writes it at that level in its log (extension/sidecar-log.ts).
// Run from a terminal, the sidecar writes the text alone, as people read it.
// A line without a level did not come from the sidecar's log: Node's own
// warnings, or what a crash printed.

/** From the most detailed to the most severe, as the editor's log names them. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where the sidecar's parts write a log line; `info` when they give no level. */
export type Log = (line: string, level?: LogLevel) => void;

const LEVELLED = /^\[(trace|debug|info|warn|error)\] (.*)$/s;
/** What Node itself writes to stderr: a warning (`(node:PID) ExperimentalWarning: ...`) and its hint line after it. */
const RUNTIME_WARNING = /^\(node:\d+\) |^\(Use `node --trace-/;

/** The line as the editor reads it: every line of a multi-line text keeps the level. */
export function formatLogLine(level: LogLevel, text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => `[${level}] ${line}`)
    .join("\n");
}

/**
 * The level and text of one stderr line. Node's warnings are warnings; any
 * other line without a level is what a crash or a stray write left, and is
 * kept as an error so that it is not overlooked.
 */
export function parseLogLine(line: string): { level: LogLevel; text: string } {
  const levelled = LEVELLED.exec(line);
  if (levelled) return { level: levelled[1] as LogLevel, text: levelled[2]! };
  return { level: RUNTIME_WARNING.test(line) ? "warn" : "error", text: line };
}
