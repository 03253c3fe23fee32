// The sidecar's stderr in the editor's log, each line at its own level
// (protocol/log-line.ts): an info line of the sidecar shows as [info], not
// [error] as a language client writes every line of a server's stderr.
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type * as vscode from "vscode";
import { parseLogLine } from "../protocol/log-line.ts";

/** The sink of the sidecar's lines: the ACP Remote log, whose methods are named as the levels are. */
export type LevelledLog = Pick<vscode.LogOutputChannel, "trace" | "debug" | "info" | "warn" | "error">;

/** Writes one stderr line of the sidecar into the log at its level. */
export function logSidecarLine(log: LevelledLog, line: string): void {
  const { level, text } = parseLogLine(line);
  log[level](text);
}

/** Forwards the sidecar's stderr, line by line, until the stream ends. */
export function forwardSidecarStderr(input: Readable, log: LevelledLog): void {
  createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", (line) => logSidecarLine(log, line));
}
